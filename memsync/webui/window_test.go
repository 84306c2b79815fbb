package webui_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
	"github.com/memsync/memsync/memsync/webui"
)

// listingStore is a store that lists but answers no window question (no
// memsync.WindowReader): the view reads the window itself.
type listingStore struct {
	memsync.Graph
	memsync.Lister
}

// TestWindowFromTheStoreOrTheView: the queue and the entity index show
// the same items and counts whether the store answers the window
// (memsync.WindowReader) or the view reads the window and counts it
// itself, for the operator and as each agent; and they show something.
func TestWindowFromTheStoreOrTheView(t *testing.T) {
	var cfg webui.Config
	r := newRigWith(t, func(c *webui.Config) { cfg = *c })
	r.add("conflict", journal.Record{Agent: "bob", Kind: journal.KindFact, Scope: journal.ScopeShared, TS: r.now.Add(-24 * time.Hour),
		Text: "billing moved to mysql last week, says @Mira", ConflictsWith: []string{r.ids["decision"]}})
	r.add("learning", journal.Record{Agent: "alice", Kind: journal.KindObservation, Scope: journal.ScopeShared, TS: r.now.Add(-24 * time.Hour),
		Text: "maybe the flaky test is the clock on #ci", Tier: "learning", Confidence: "low", Entities: []string{"postgres"}})
	r.add("bobLearning", journal.Record{Agent: "bob", Kind: journal.KindObservation, Scope: journal.ScopePrivate, TS: r.now.Add(-24 * time.Hour),
		Text: "bob guesses the " + bobSecret + " cache is cold for @mira", Tier: "learning", Confidence: "low"})
	r.sync()
	st := listingStore{Graph: r.g, Lister: r.g.(memsync.Lister)}
	if _, ok := any(st).(memsync.WindowReader); ok {
		t.Fatal("listingStore answers window questions: the test compares nothing")
	}
	plain := cfg
	plain.Open = func(context.Context) *read.Reader { rd := read.New(st, nil, nil); rd.Graph = "embedded"; return rd }
	byView, err := webui.New(plain)
	if err != nil {
		t.Fatal(err)
	}
	byStore := r.srv
	csrf := regexp.MustCompile(`name="csrf" value="[^"]*"`)
	for _, path := range []string{"/queue", "/queue?as=alice", "/queue?as=bob", "/entities", "/entities?as=alice&sort=newest", "/entities?as=bob&sort=name", "/"} {
		r.srv = byStore
		a := csrf.ReplaceAllString(r.get(path).Body.String(), "")
		r.srv = byView
		b := csrf.ReplaceAllString(r.get(path).Body.String(), "")
		if a != b {
			t.Errorf("%s: the store's answer and the view's differ:\n%s\n----\n%s", path, a, b)
		}
		if strings.HasPrefix(path, "/queue") && strings.Count(a, `<li class="memory`) < 3 ||
			strings.HasPrefix(path, "/entities") && strings.Count(a, `<tr class="entity"`) < 3 {
			t.Errorf("%s: shows too little to compare:\n%s", path, a)
		}
	}
	r.srv = byStore
	if al := r.get("/entities?as=alice").Body.String(); strings.Contains(al, "AGENT:bob") || strings.Contains(al, bobSecret) {
		t.Errorf("alice's entity index names bob's group or his private record:\n%s", al)
	}
}
