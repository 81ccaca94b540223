package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// Info is what `coworkenv queue status` shows of a queue.
type Info struct {
	Name string
	Status
	Settings
}

// Inspect connects to the server at url and reads the counts and settings of the queue name, or
// of every queue on the server (every stream JOBS_N of the subject coworkenv.N.jobs) by name
// when name is "". It creates and changes nothing.
func Inspect(ctx context.Context, url, name string) ([]Info, error) {
	if name != "" && !validName.MatchString(name) {
		return nil, fmt.Errorf("queue name %q: use letters, digits, '_' and '-'", name)
	}
	nc, err := connect(url, "coworkenv queue status")
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	names := []string{name}
	if name == "" {
		if names, err = queueNames(ctx, js); err != nil {
			return nil, serverError(url, err)
		}
	}
	var out []Info
	for _, n := range names {
		info, err := inspect(ctx, js, n)
		if err != nil {
			return nil, serverError(url, err)
		}
		out = append(out, info)
	}
	return out, nil
}

// queueNames are the names of the queues on the server, sorted.
func queueNames(ctx context.Context, js jetstream.JetStream) ([]string, error) {
	l := js.StreamNames(ctx, jetstream.WithStreamListSubject(jobsSubject("*")))
	var names []string
	for s := range l.Name() {
		if n, ok := strings.CutPrefix(s, "JOBS_"); ok && validName.MatchString(n) {
			names = append(names, n)
		}
	}
	if err := l.Err(); err != nil {
		return nil, err
	}
	slices.Sort(names)
	return names, nil
}

func inspect(ctx context.Context, js jetstream.JetStream, name string) (Info, error) {
	info := Info{Name: name}
	jobs, err := js.Stream(ctx, "JOBS_"+name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return info, fmt.Errorf("no queue named %s", name)
	}
	if err != nil {
		return info, fmt.Errorf("queue %s: jobs stream: %w", name, err)
	}
	results, err := js.Stream(ctx, "RESULTS_"+name)
	if err != nil {
		return info, fmt.Errorf("queue %s: results stream: %w", name, err)
	}
	workers, err := jobs.Consumer(ctx, workersConsumer)
	if err != nil {
		return info, fmt.Errorf("queue %s: workers consumer: %w", name, err)
	}
	info.Settings = settingsOf(jobs.CachedInfo(), workers.CachedInfo())
	if info.Status, err = status(ctx, jobs, results, workers); err != nil {
		return info, fmt.Errorf("queue %s: %w", name, err)
	}
	return info, nil
}
