package report

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/coworkenv/coworkenv/corpus"
	"github.com/coworkenv/coworkenv/dsl"
	"github.com/coworkenv/coworkenv/isolate"
	"github.com/coworkenv/coworkenv/rollout"
	"github.com/coworkenv/coworkenv/runtime/episode"
	"github.com/coworkenv/coworkenv/runtime/trace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The browser test renders every kind of page in headless Chromium and fails on any console
// error, uncaught exception or blocked request; it checks that the main elements are visible,
// uses the failed-samples filter and the keyboard, measures a rollout of 10,000 episodes, and
// saves a PNG of each view (1280 px wide and a phone's width; light and dark for the episode
// view) in $COWORKENV_SCREENSHOTS, or testdata/screenshots (ignored by git).
//
// Without Chromium (/usr/bin/chromium, or $COWORKENV_CHROMIUM) it is skipped, unless
// COWORKENV_BROWSER_TESTS=1, when it fails. -update-screenshots also writes the README's two
// images to docs/images.

var updateScreenshots = flag.Bool("update-screenshots", false, "write the README's images (docs/images) from a corpus task and a small rollout")

func chromiumPath(t *testing.T) string {
	path := cmpOr(os.Getenv("COWORKENV_CHROMIUM"), "/usr/bin/chromium")
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("COWORKENV_BROWSER_TESTS") == "1" {
			t.Fatalf("COWORKENV_BROWSER_TESTS=1 but there is no Chromium at %s: %v", path, err)
		}
		t.Skipf("no Chromium at %s (apt-get install chromium, or set COWORKENV_CHROMIUM); COWORKENV_BROWSER_TESTS=1 makes this a failure", path)
	}
	return path
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// browser starts a headless Chromium for the test, with the flags this machine needs.
func browser(t *testing.T) context.Context {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun, chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	require.NoError(t, chromedp.Do(ctx), "start Chromium")
	return ctx
}

// watch records what a page reports: before any script of the page runs, it counts calls of
// alert() and collects violations of the content security policy.
const watch = `window.__alerts = 0; window.alert = function () { window.__alerts++; };
window.__violations = [];
document.addEventListener('securitypolicyviolation', function (e) { window.__violations.push(e.violatedDirective + ' ' + e.blockedURI); });`

// tab is one page open in its own tab, with its console collected.
type tab struct {
	t    *testing.T
	ctx  context.Context
	stop context.CancelFunc
	mu   sync.Mutex
	msgs []chromedp.ConsoleMessage
	done chan struct{}
}

func openTab(t *testing.T, browserCtx context.Context, path string, width, height int64, dark bool) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browserCtx)
	tb := &tab{t: t, ctx: ctx, stop: cancel, done: make(chan struct{})}
	messages := chromedp.Console(ctx)
	go func() {
		defer close(tb.done)
		for m, err := range messages {
			if err != nil {
				return
			}
			tb.mu.Lock()
			tb.msgs = append(tb.msgs, m)
			tb.mu.Unlock()
		}
	}()
	scheme := "light"
	if dark {
		scheme = "dark"
	}
	abs, err := filepath.Abs(path)
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := chromedp.Call(ctx, cdppage.AddScriptToEvaluateOnNewDocument, cdppage.AddScriptToEvaluateOnNewDocumentParams{Source: watch})
			if err != nil {
				return err
			}
			_, err = chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
			return err
		}),
		viewport(width, height),
		chromedp.Navigate("file://"+abs),
		chromedp.WaitVisible(chromedp.CSS("h1")),
	))
	return tb
}

func viewport(width, height int64) chromedp.Action[chromedp.Void] {
	if width < 700 {
		return chromedp.EmulateViewport(width, height, chromedp.EmulateMobile, chromedp.EmulatePortrait)
	}
	return chromedp.EmulateViewport(width, height)
}

// eval evaluates JavaScript in the page.
func eval[T any](tb *tab, js string) T {
	tb.t.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[T](js))
	require.NoError(tb.t, err, js)
	return v
}

func (tb *tab) do(actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	require.NoError(tb.t, chromedp.Do(tb.ctx, actions...))
}

// visible asserts that the elements are shown (laid out, not hidden).
func (tb *tab) visible(sels ...string) {
	tb.t.Helper()
	for _, sel := range sels {
		n := eval[int](tb, fmt.Sprintf(`Array.from(document.querySelectorAll(%q)).filter(e => e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden').length`, sel))
		assert.Positive(tb.t, n, "nothing visible matches %s", sel)
	}
}

// screenshot saves the whole page as a PNG.
func (tb *tab) screenshot(path string) {
	tb.t.Helper()
	require.NoError(tb.t, os.MkdirAll(filepath.Dir(path), 0o755))
	img, err := chromedp.Run(tb.ctx, chromedp.FullScreenshot(100))
	require.NoError(tb.t, err)
	require.NoError(tb.t, os.WriteFile(path, img, 0o644))
}

// viewShot saves what the viewport shows, as a PNG (the README's images).
func (tb *tab) viewShot(path string) {
	tb.t.Helper()
	img, err := chromedp.Run(tb.ctx, chromedp.CaptureScreenshot())
	require.NoError(tb.t, err)
	require.NoError(tb.t, os.WriteFile(path, img, 0o644))
}

// close closes the tab and fails the test on any error, exception, alert or policy violation
// the page reported.
func (tb *tab) close() {
	tb.t.Helper()
	alerts := eval[int](tb, `window.__alerts`)
	violations := eval[[]string](tb, `window.__violations`)
	tb.stop()
	<-tb.done
	assert.Zero(tb.t, alerts, "the page called alert()")
	assert.Empty(tb.t, violations, "the page broke its content security policy")
	for _, m := range tb.msgs {
		if m.IsException() || m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleWarning {
			tb.t.Errorf("console %s: %s (%s:%d)", m.Type, m.Text, m.URL, m.Line)
		}
	}
}

func screenshotDir() string {
	return cmpOr(os.Getenv("COWORKENV_SCREENSHOTS"), filepath.Join("testdata", "screenshots"))
}

func TestBrowser(t *testing.T) {
	bctx := browser(t)
	f := newFixture(t)
	pages(t, f) // writes every page into f.dir
	shots := screenshotDir()
	path := func(name string) string { return filepath.Join(f.dir, name) }

	t.Run("episode", func(t *testing.T) {
		for _, v := range []struct {
			width, height int64
			dark          bool
			name          string
		}{{1280, 900, false, "episode-1280-light.png"}, {1280, 900, true, "episode-1280-dark.png"},
			{390, 844, false, "episode-390-light.png"}, {390, 844, true, "episode-390-dark.png"}} {
			tb := openTab(t, bctx, path("episode-model.html"), v.width, v.height, v.dark)
			tb.visible("h1", "nav", "#e0-summary .banner", ".turn .msg.user", ".turn .call", ".turn .msg.reply", ".changes", "#e0-verdict table")
			// the hostile text of the trace is text: no image, no element made of it
			assert.Zero(t, eval[int](tb, `document.images.length + document.querySelectorAll('main script, main a[href^="http"]').length`))
			assert.Contains(t, eval[string](tb, `document.querySelector('.msg.reply .text').textContent`), hostile)
			// dark mode is dark: the page's background follows prefers-color-scheme
			bg := eval[string](tb, `getComputedStyle(document.body).backgroundColor`)
			assert.Equal(t, v.dark, bg == "rgb(13, 17, 23)", "background %s", bg)
			// no horizontal scrolling of the page at this width
			assert.LessOrEqual(t, eval[int](tb, `document.documentElement.scrollWidth`), int(v.width), "the page is wider than %d px", v.width)
			if !v.dark && v.width == 1280 {
				// the keyboard: Tab reaches the reasoning's summary, Enter opens it
				tb.do(chromedp.Focus(chromedp.CSS("details.reasoning > summary")), chromedp.KeyEvent("\r"))
				assert.True(t, eval[bool](tb, `document.querySelector('details.reasoning').open`), "Enter did not open the reasoning")
				assert.Equal(t, "SUMMARY", eval[string](tb, `document.activeElement.tagName`))
				// the toolbar opens every section
				tb.do(chromedp.Click(chromedp.CSS(`button[data-details="open"]`)))
				assert.Zero(t, eval[int](tb, `document.querySelectorAll('main details:not([open])').length`))
			}
			tb.screenshot(filepath.Join(shots, v.name))
			tb.close()
		}
	})

	t.Run("rollout", func(t *testing.T) {
		for _, width := range []int64{1280, 390} {
			tb := openTab(t, bctx, path("rollout.html"), width, 900, false)
			tb.visible("h1", "#summary table", "figure.chart svg", "#by-capability table", "#tasks tbody tr", "#failed-only")
			all := eval[int](tb, `document.querySelectorAll('#tasks tbody tr').length`)
			passed := eval[int](tb, `document.querySelectorAll('#tasks .samples .pass').length`)
			require.Equal(t, 3, all)
			require.Positive(t, passed)
			if width == 1280 {
				// the filter, from the keyboard: Space on the focused checkbox shows only failed samples
				tb.do(chromedp.Focus(chromedp.CSS("#failed-only")), chromedp.KeyEvent(" "))
				assert.True(t, eval[bool](tb, `document.getElementById('failed-only').checked`))
				assert.Zero(t, eval[int](tb, `document.querySelectorAll('#tasks .samples .pass').length`), "a passed sample is shown")
				assert.Positive(t, eval[int](tb, `document.querySelectorAll('#tasks .samples .fail').length`))
				assert.Contains(t, eval[string](tb, `document.querySelector('#tasks [data-status]').textContent`), "Showing")
				// a sample links to its episode view, which opens without errors
				href := eval[string](tb, `document.querySelector('#tasks .samples a').getAttribute('href')`)
				require.True(t, strings.HasPrefix(href, "./rollout-episodes/"), href)
				tb.screenshot(filepath.Join(shots, "rollout-1280-failed.png"))
				tb.do(chromedp.Click(chromedp.CSS(`#tasks .samples a`)), chromedp.WaitVisible(chromedp.CSS(".turn")))
				tb.visible(".back a", ".turn .msg.user")
			} else {
				tb.screenshot(filepath.Join(shots, "rollout-390.png"))
			}
			tb.close()
		}
		tb := openTab(t, bctx, path("rollout.html"), 1280, 900, true)
		tb.screenshot(filepath.Join(shots, "rollout-1280-dark.png"))
		tb.close()
	})

	t.Run("validation", func(t *testing.T) {
		for _, width := range []int64{1280, 390} {
			tb := openTab(t, bctx, path("validation.html"), width, 900, false)
			tb.visible("h1", "#summary figure.chart svg", "#codes table", "#tasks .task-card", ".diag pre")
			n := eval[int](tb, `document.querySelectorAll('#tasks .task-card').length`)
			require.Equal(t, 5, n)
			// worst first
			assert.Equal(t, "invalid", eval[string](tb, `document.querySelector('#tasks .task-card .badge').textContent`))
			tb.screenshot(filepath.Join(shots, fmt.Sprintf("validation-%d.png", width)))
			tb.do(chromedp.SetValue(chromedp.CSS("#status-filter"), "ok"), chromedp.Evaluate[chromedp.Void](`document.getElementById('status-filter').dispatchEvent(new Event('change'))`))
			assert.Equal(t, 2, eval[int](tb, `document.querySelectorAll('#tasks .task-card').length`))
			tb.close()
		}
	})

	t.Run("generation", func(t *testing.T) {
		for _, width := range []int64{1280, 390} {
			tb := openTab(t, bctx, path("generation.html"), width, 900, false)
			tb.visible("h1", "figure.chart svg", "#rounds table", "#reasons table", "#attempts tbody tr")
			assert.Equal(t, 8, eval[int](tb, `document.querySelectorAll('#attempts tbody tr').length`))
			tb.do(chromedp.Click(chromedp.CSS("#rejected-only")))
			assert.Equal(t, 4, eval[int](tb, `document.querySelectorAll('#attempts tbody tr').length`))
			tb.screenshot(filepath.Join(shots, fmt.Sprintf("generation-%d.png", width)))
			tb.close()
		}
	})

	t.Run("compare", func(t *testing.T) {
		for _, width := range []int64{1280, 390} {
			tb := openTab(t, bctx, path("compare.html"), width, 900, false)
			tb.visible("h1", "#summary table", "figure.chart svg", "#by-capability table", "#flips-up", "#flips-down", "#flips .samples a")
			assert.Equal(t, 1, eval[int](tb, `document.querySelectorAll('#flips table.tasks')[0].querySelectorAll('tbody tr').length`))
			assert.Contains(t, eval[string](tb, `document.querySelector('#summary tbody tr .delta').textContent`), "+11.1")
			assert.LessOrEqual(t, eval[int](tb, `document.documentElement.scrollWidth`), int(width), "the page is wider than %d px", width)
			tb.screenshot(filepath.Join(shots, fmt.Sprintf("compare-%d.png", width)))
			if width == 1280 {
				// a flipped task's sample opens its episode view, which links back
				href := eval[string](tb, `document.querySelector('#flips .samples a').getAttribute('href')`)
				require.True(t, strings.HasPrefix(href, "./compare-episodes/"), href)
				tb.do(chromedp.Click(chromedp.CSS(`#flips .samples a`)), chromedp.WaitVisible(chromedp.CSS(".turn")))
				tb.visible(".back a", ".turn .msg.user")
			}
			tb.close()
		}
		tb := openTab(t, bctx, path("compare.html"), 1280, 900, true)
		tb.screenshot(filepath.Join(shots, "compare-1280-dark.png"))
		tb.close()
	})

	t.Run("rollout of 10,000 episodes", func(t *testing.T) {
		out := filepath.Join(f.dir, "large.html")
		res := largeRollout(2500, 4)
		require.NoError(t, writeRollout(context.Background(), out, res, "large", make([]*dsl.Task, len(res.Tasks)), nil, Options{NoEpisodes: true}))
		info, err := os.Stat(out)
		require.NoError(t, err)
		tb := openTab(t, bctx, out, 1280, 900, false)
		tb.visible("#tasks tbody tr")
		loaded := eval[float64](tb, `performance.getEntriesByType('navigation')[0].loadEventEnd`)
		filter := eval[float64](tb, `(() => { const t0 = performance.now(); document.getElementById('failed-only').click(); return performance.now() - t0; })()`)
		shown := eval[int](tb, `document.querySelectorAll('#tasks tbody tr').length`)
		search := eval[float64](tb, `(() => { const s = document.getElementById('task-search'); const t0 = performance.now(); s.value = 'task-12'; s.dispatchEvent(new Event('input')); return performance.now() - t0; })()`)
		next := eval[float64](tb, `(() => { document.getElementById('task-search').value = ''; document.getElementById('task-search').dispatchEvent(new Event('input')); const t0 = performance.now(); document.querySelector('#tasks [data-next]').click(); return performance.now() - t0; })()`)
		status := eval[string](tb, `document.querySelector('#tasks [data-status]').textContent`)
		assert.Equal(t, 50, shown, "a page shows 50 tasks")
		assert.Contains(t, status, "page 2")
		tb.close()
		line := fmt.Sprintf("rollout of 10,000 episodes (2,500 tasks x 4 samples): page %.1f MB, loaded in %.0f ms, failed-samples filter %.1f ms, search %.1f ms, next page %.1f ms (%s)",
			float64(info.Size())/1e6, loaded, filter, search, next, status)
		t.Log(line)
		require.NoError(t, os.MkdirAll(shots, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(shots, "measurements.txt"), []byte(line+"\n"), 0o644))
	})

	if *updateScreenshots {
		t.Run("README images", func(t *testing.T) { readmeImages(t, bctx) })
	}
}

// largeRollout is a rollout of tasks x samples episodes, with a pass rate that varies by task,
// some failed samples and a few capabilities.
func largeRollout(tasks, samples int) *rollout.Result {
	res := &rollout.Result{Samples: samples, Agent: "synthetic"}
	caps := []string{"mail.reply", "files.extract", "calendar.schedule", "records.update", "multi_turn.followup"}
	for i := range tasks {
		info := isolate.TaskInfo{Name: "task-" + strconv.Itoa(i), File: fmt.Sprintf("tasks/t%04d.star", i), Turns: 1 + i%3,
			Capabilities: []string{caps[i%len(caps)], caps[(i/7)%len(caps)]}}
		tr := rollout.TaskResult{Task: info.Stub("")}
		for s := range samples {
			smp := rollout.Sample{Index: s, Passed: (i*7+s*3)%10 < 6}
			if smp.Passed {
				smp.Score = 1
			} else {
				smp.Score = math.Round(float64((i+s)%10)) / 10
			}
			if (i+s)%97 == 0 {
				smp.Err, smp.Code = "the model's endpoint failed", "model-error"
			}
			tr.Samples = append(tr.Samples, smp)
		}
		res.Tasks = append(res.Tasks, tr)
	}
	return res
}

// readmeImages writes docs/images/episode.png (the oracle's episode of a corpus task) and
// docs/images/rollout.png (a small rollout of corpus tasks), as a reader of the README sees them,
// and docs/images/compare.png (that rollout against a better one, for docs/recipe.md).
func readmeImages(t *testing.T, bctx context.Context) {
	dir := t.TempDir()
	images, err := filepath.Abs(filepath.Join("..", "docs", "images"))
	require.NoError(t, err)
	c := corpus.Open()
	ctx := context.Background()
	locate := func(_ context.Context, _ string, start *trace.Start) (*dsl.Task, string, error) {
		task, _, err := isolate.FindTask(ctx, c, start.TaskPath(), start.Task)
		return task, start.TaskPath(), err
	}
	load := func(rel, name string) rollout.Task {
		task, src, err := isolate.FindTask(ctx, c, rel, name)
		require.NoError(t, err)
		sources, err := trace.Sources(c, rel)
		require.NoError(t, err)
		return rollout.Task{Task: task, Source: src, Sources: sources}
	}
	tasks := []rollout.Task{
		load("tasks/mail/fuel_surcharge_answer.star", "fuel-surcharge-answer"),
		load("tasks/files/board_kpi_december.star", "board-kpi-december"),
		load("tasks/calendar/depot_audit_reschedule.star", "depot-audit-fleet-sync-move"),
		load("tasks/coordination/customs_audit_pack.star", "customs-audit-pack"),
		load("tasks/records/pallet_stock_reorder.star", "pallet-stock-reorder-followup"),
		load("tasks/chat/rack_inspection_dm.star", "rack-inspection-dm"),
	}
	plan := []bool{true, true, true, true, false, true, true, false, false, true, true, true, true, true, false, true, false, true}
	n := 0
	out := filepath.Join(dir, "runs")
	res, err := rollout.Run(ctx, tasks, rollout.Options{Out: out, Samples: 3, Jobs: 1, Agent: "scripted",
		NewAgent: func(*episode.Prepared) (episode.Agent, string, error) {
			ok := plan[n%len(plan)]
			n++
			if ok {
				return scripted{episode.Oracle{}}, "", nil
			}
			return scripted{episode.Noop{}}, "", nil
		}})
	require.NoError(t, err)
	report := filepath.Join(dir, "rollout.html")
	require.NoError(t, WriteRollout(ctx, report, res, "runs", Options{Locate: locate})) // "runs": the folder as shown

	require.NoError(t, os.MkdirAll(filepath.Join("..", "docs", "images"), 0o755))
	tb := openTab(t, bctx, report, 1280, 1100, false)
	tb.viewShot(filepath.Join("..", "docs", "images", "rollout.png"))
	tb.close()
	ep := filepath.Join(EpisodesDir(report), "fuel-surcharge-answer", "0.html")
	tb = openTab(t, bctx, ep, 1280, 1500, false)
	tb.do(chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('.call:has(.changes) details').forEach(d => d.open = true);
document.getElementById('e0-turn-0').scrollIntoView()`))
	tb.viewShot(filepath.Join("..", "docs", "images", "episode.png"))
	tb.close()
	// the comparison (docs/recipe.md): the same tasks rolled out again by an agent that solves more
	better := []bool{true, true, true, true, true, false, true, true, true, false, true, true, true, true, true, true, true, true}
	n = 0
	plan = better
	out2 := filepath.Join(dir, "runs-b")
	_, err = rollout.Run(ctx, tasks, rollout.Options{Out: out2, Samples: 3, Jobs: 1, Agent: "scripted",
		NewAgent: func(*episode.Prepared) (episode.Agent, string, error) {
			ok := plan[n%len(plan)]
			n++
			if ok {
				return scripted{episode.Oracle{}}, "", nil
			}
			return scripted{episode.Noop{}}, "", nil
		}})
	require.NoError(t, err)
	cmpPage := filepath.Join(dir, "compare.html")
	t.Chdir(dir) // the folders as shown: runs and runs-b
	require.NoError(t, WriteCompare(ctx, cmpPage, "runs", "runs-b", Options{Locate: locate}))
	tb = openTab(t, bctx, cmpPage, 1280, 1100, false)
	tb.viewShot(filepath.Join(images, "compare.png"))
	tb.close()
	for _, name := range []string{"episode.png", "rollout.png", "compare.png"} {
		info, err := os.Stat(filepath.Join(images, name))
		require.NoError(t, err)
		t.Logf("docs/images/%s: %d KB", name, info.Size()/1024)
		assert.Less(t, info.Size(), int64(300<<10), name)
	}
}
