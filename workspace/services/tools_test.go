package services_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/coworkenv/coworkenv/internal/jsonv"
	"github.com/coworkenv/coworkenv/internal/servicetest"
	"github.com/coworkenv/coworkenv/workspace"
	"github.com/coworkenv/coworkenv/workspace/services"
	"github.com/coworkenv/coworkenv/workspace/tools"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKernelTools(t *testing.T) {
	var names []string
	for _, tl := range slices.Concat(services.Group("fs"), services.Group("mail"), services.Group("calendar")) {
		names = append(names, tl.Name)
		assert.True(t, tools.ValidName(tl.Name))
		assert.NotEmpty(t, tl.Description)
		assert.NotNil(t, tl.Run)
		for _, p := range tl.Params {
			assert.True(t, tools.ValidName(p.Name), "%s.%s", tl.Name, p.Name)
			assert.NotEmpty(t, p.Description, "%s.%s", tl.Name, p.Name)
			assert.False(t, p.Required && p.HasDefault, "%s.%s", tl.Name, p.Name)
		}
	}
	assert.Equal(t, []string{
		"fs_list", "fs_read", "fs_write", "fs_delete", "fs_move", "fs_search",
		"mail_list", "mail_read", "mail_mark", "mail_send", "mail_reply", "mail_forward", "mail_move", "mail_save_attachment",
		"calendar_list", "calendar_create", "calendar_update", "calendar_delete",
	}, names)
	for _, g := range []string{"fs", "mail", "calendar"} {
		for _, tl := range services.Group(g) {
			assert.Equal(t, g, tl.Group)
		}
	}
}

func TestSchemasEncode(t *testing.T) {
	for _, tl := range services.Tools() {
		_, err := jsonv.Encode(tl.Schema())
		assert.NoError(t, err, tl.Name)
	}
}

// typical is the benchmark state: 50 files of about 1 KB, 20 mails, 10 events, 30 records.
func typical(tb testing.TB) *workspace.State {
	tb.Helper()
	ws := workspace.New(servicetest.Start, 7)
	body := strings.Repeat("lorem ipsum dolor sit amet, consectetur adipiscing elit\n", 18)
	for i := 0; i < 50; i++ {
		require.NoError(tb, ws.Files().Write(fmt.Sprintf("/dir%d/file%02d.txt", i%5, i), body))
	}
	for i := 0; i < 20; i++ {
		_, err := ws.Mail().Deliver(workspace.Delivery{Sender: fmt.Sprintf("p%d@acme.example", i),
			Subject: fmt.Sprintf("subject %d", i), Body: body[:300], Date: fmt.Sprintf("2026-01-0%dT%02d:00:00Z", 1+i%4, i)})
		require.NoError(tb, err)
	}
	for i := 0; i < 10; i++ {
		_, err := ws.Calendar().Add(workspace.Event{Title: "m", Start: fmt.Sprintf("2026-01-%02dT10:00:00Z", 6+i), End: fmt.Sprintf("2026-01-%02dT11:00:00Z", 6+i)})
		require.NoError(tb, err)
	}
	for i := 0; i < 30; i++ {
		_, err := ws.DB().Insert("tickets", jsonv.NewObject("n", int64(i)))
		require.NoError(tb, err)
	}
	ws.Freeze()
	return ws
}

func BenchmarkToolCall(b *testing.B) {
	base := typical(b)
	// Each call is followed by Hash, as the episode does; fs_write alternates between two
	// contents so that every call changes the state.
	for _, c := range []struct{ name, args, args2 string }{
		{"mail_list", `{}`, `{"query":"subject 1"}`},
		{"fs_read", `{"path":"/dir0/file00.txt"}`, `{"path":"/dir1/file01.txt"}`},
		{"fs_write", `{"path":"/dir0/file00.txt","content":"changed"}`, `{"path":"/dir0/file00.txt","content":"changed again"}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			tl, _ := services.Tool(c.name)
			args := []*jsonv.Object{servicetest.Object(b, c.args), servicetest.Object(b, c.args2)}
			ws := base.Fork()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				if _, err := tl.Call(ws, args[i%2]); err != nil {
					b.Fatal(err)
				}
				_ = ws.Hash()
			}
		})
	}
}
