package read

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/memsync/memsync/memsync"
)

// source is a Searcher known by name; the asks below only tell them apart.
type source struct {
	memsync.Searcher
	name string
}

var errDown = errors.New("connection refused")

func TestRead(t *testing.T) {
	graph, journals := &source{name: "graph"}, &source{name: "journals"}
	final := errors.New("unknown role")
	for _, tc := range []struct {
		name        string
		offline     bool  // the Reader was opened offline
		graphErr    error // what the graph answers
		check       error // Check's verdict after a graph answer
		cancel      bool  // the caller gave up
		want        string
		wantErr     error
		wantOffline bool
		wantNote    bool
	}{
		{name: "the graph answers", want: "graph"},
		{name: "the graph fails: the journals answer", graphErr: errDown, want: "journals", wantOffline: true, wantNote: true},
		{name: "a rebuild began meanwhile", check: errDown, want: "journals", wantOffline: true, wantNote: true},
		{name: "an error the journals would give too stands", graphErr: final, wantErr: final},
		{name: "opened offline: the journals only", offline: true, want: "journals", wantOffline: true},
		{name: "the caller gave up", graphErr: errDown, cancel: true, wantErr: context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := New(graph, journals, nil)
			if tc.offline {
				r = Offline(journals, "graph closed")
			}
			r.Graph = "embedded"
			noted := false
			r.Note = func(error) { noted = true }
			if tc.check != nil {
				r.Check = func() error { return tc.check }
			}
			if tc.cancel {
				cancel()
			}
			got, err := ReadUnless(ctx, r, func(s memsync.Searcher) (string, error) {
				if s.(*source) == graph && tc.graphErr != nil {
					return "", tc.graphErr
				}
				return s.(*source).name, nil
			}, func(err error) bool { return errors.Is(err, final) })
			if !errors.Is(err, tc.wantErr) || got != tc.want || r.Offline != tc.wantOffline || noted != tc.wantNote {
				t.Fatalf("got %q, %v (offline %v, noted %v); want %q, %v (offline %v, noted %v)",
					got, err, r.Offline, noted, tc.want, tc.wantErr, tc.wantOffline, tc.wantNote)
			}
			if tc.wantNote && !strings.HasPrefix(r.Reason, "embedded graph: ") {
				t.Fatalf("reason %q does not name the graph", r.Reason)
			}
		})
	}
}

// TestReadMissing: what the graph lacks (not projected yet) is read from
// the journals, without a failure note.
func TestReadMissing(t *testing.T) {
	graph, journals := &source{name: "graph"}, &source{name: "journals"}
	r := New(graph, journals, nil)
	r.Graph = "embedded"
	r.Note = func(error) { t.Fatal("a missing memory is no failure") }
	got, err := ReadMissing(context.Background(), r, func(s memsync.Searcher) (string, error) {
		if s.(*source) == graph {
			return "", nil
		}
		return "mem_1", nil
	}, func(v string, err error) bool { return err == nil && v == "" })
	if err != nil || got != "mem_1" || !r.Offline || !strings.Contains(r.Reason, "not projected") {
		t.Fatalf("got %q %v offline %v reason %q", got, err, r.Offline, r.Reason)
	}
}

// TestReadMissingUnless: an error that is the answer's (a memory the
// reader may not see, as the web view's history asks) is no failure, and
// no note, yet it may say the graph lacks the memory: the journals are
// asked then, as for a memory not projected yet.
func TestReadMissingUnless(t *testing.T) {
	graph, journals := &source{name: "graph"}, &source{name: "journals"}
	notVisible := errors.New("not visible")
	for _, tc := range []struct {
		name        string
		missing     bool // missing says the graph lacks it
		want        string
		wantErr     error
		wantOffline bool
	}{
		{name: "not visible, and not missing: the answer stands", wantErr: notVisible},
		{name: "not visible in the graph: the journals are asked", missing: true, want: "journals", wantOffline: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(graph, journals, nil)
			r.Graph = "embedded"
			r.Note = func(error) { t.Fatal("an answer's own error is no failure") }
			got, err := ReadMissingUnless(context.Background(), r, func(s memsync.Searcher) (string, error) {
				if s.(*source) == graph {
					return "", notVisible
				}
				return "journals", nil
			}, func(err error) bool { return errors.Is(err, notVisible) },
				func(_ string, err error) bool { return tc.missing && errors.Is(err, notVisible) })
			if !errors.Is(err, tc.wantErr) || got != tc.want || r.Offline != tc.wantOffline {
				t.Fatalf("got %q, %v (offline %v); want %q, %v (offline %v)", got, err, r.Offline, tc.want, tc.wantErr, tc.wantOffline)
			}
			if tc.wantOffline && !strings.Contains(r.Reason, "not projected") {
				t.Fatalf("reason %q", r.Reason)
			}
		})
	}
}

func TestCloseOnce(t *testing.T) {
	n := 0
	r := New(&source{}, &source{}, func() { n++ })
	r.Close()
	r.Close()
	var none *Reader
	none.Close()
	if n != 1 {
		t.Fatalf("closed %d times, want once", n)
	}
}
