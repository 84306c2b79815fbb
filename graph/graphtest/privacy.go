package graphtest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
	"github.com/memsync/memsync/memsync/score"
)

// extra sets one of the signal fields the parser keeps among Extra.
func extra(field string, v any) func(*journal.Record) {
	return func(r *journal.Record) {
		b, _ := json.Marshal(v)
		if r.Extra == nil {
			r.Extra = map[string]json.RawMessage{}
		}
		r.Extra[field] = b
	}
}

// CrossingSignals is b's private decision "b_secret" and every signal that
// agent a, who cannot see it, can send it (SPEC §7, references cross no
// privacy line): links twice (from a shared and a private record),
// supports twice, a successful outcome, conflicts_with, supersedes, and
// feedback important and wrong. None of them may change anything.
func CrossingSignals() (secret memsync.Memory, crossing []memsync.Memory) {
	secret = mem("b_secret", "b", 1, "the launch code is zebra", kind(journal.KindDecision))
	crossing = []memsync.Memory{
		mem("a_link1", "a", 2, "builds on it", shared, links("b_secret")),
		mem("a_link2", "a", 3, "builds on it again", links("b_secret")),
		mem("a_sup1", "a", 4, "confirms it", shared, extra(journal.FieldSupports, []string{"b_secret"})),
		mem("a_sup2", "a", 5, "confirms it again", extra(journal.FieldSupports, []string{"b_secret"})),
		mem("a_out", "a", 6, "it paid off", shared, kind(journal.KindOutcome), links("b_secret"),
			extra(journal.FieldResult, journal.ResultSuccess)),
		mem("a_conf", "a", 7, "it is wrong", shared, confl("b_secret")),
		mem("a_repl", "a", 8, "replaces it", shared, supers("b_secret")),
		mem("a_imp", "a", 9, "important", shared, kind(journal.KindFeedback), links("b_secret"),
			extra(journal.FieldFeedback, journal.FeedbackImportant)),
		mem("a_wrong", "a", 10, "wrong", kind(journal.KindFeedback), links("b_secret"),
			extra(journal.FieldFeedback, journal.FeedbackWrong)),
	}
	return secret, crossing
}

// PrivacyClocks are the clocks at which the signal tests score: between
// the signals, after them, and long after (decay, max_age).
var PrivacyClocks = []time.Time{clock.Add(5 * time.Second), clock.Add(11 * time.Second), clock.Add(100 * 24 * time.Hour)}

// ScoreAt is what every reader derives of memory uuid for a reader of
// groups at each clock: its supersession, importance, confidence, status,
// effects and whether it is promotable, one line per clock.
func ScoreAt(t *testing.T, r memsync.SignalReader, uuid string, groups []string, clocks []time.Time) []string {
	t.Helper()
	nodes, err := r.Get(ctx(t), []string{uuid})
	if err != nil {
		t.Fatalf("Get(%s): %v", uuid, err)
	}
	n, ok := nodes[uuid]
	if !ok {
		t.Fatalf("Get(%s): not projected", uuid)
	}
	var out []string
	for _, at := range clocks {
		scored, err := read.ScoreNodes(ctx(t), r, []memsync.Node{n}, groups, memsync.AsOf(at))
		if err != nil {
			t.Fatalf("ScoreNodes: %v", err)
		}
		s := scored[uuid]
		var effects []string
		for _, e := range s.Result.Effects {
			effects = append(effects, e.Text())
		}
		out = append(out, fmt.Sprintf("%s invalid_at=%v replaced_by=%q imp=%.4f conf=%.4f %s promotable=%v [%s]",
			at.Format(time.RFC3339), n.InvalidAt, n.ReplacedBy, s.Result.Importance, s.Result.Confidence,
			s.Result.Status, score.Promotable(s.Result), strings.Join(effects, "; ")))
	}
	return out
}

// testCrossingSignalsChangeNothing: a signal from a record that cannot see
// its target changes nothing, whichever arrives first: b's private
// memory, named by every signal a can send, scores and stands exactly as
// in a graph without a's records, and is never promotable.
func testCrossingSignalsChangeNothing(t *testing.T, g memsync.Graph) {
	secret, crossing := CrossingSignals()
	apply(t, g, secret)
	want := ScoreAt(t, g, secret.UUID, groups("b"), PrivacyClocks)
	for _, l := range want {
		if strings.Contains(l, "promotable=true") || !strings.Contains(l, `replaced_by=""`) {
			t.Fatalf("without a's records: %s", l)
		}
	}
	for _, order := range []string{"target first", "signals first", "one batch"} {
		if err := g.Drop(ctx(t)); err != nil {
			t.Fatal(err)
		}
		switch order {
		case "target first":
			apply(t, g, secret)
			for _, m := range crossing {
				apply(t, g, m)
			}
		case "signals first":
			apply(t, g, crossing...)
			apply(t, g, secret)
		default:
			apply(t, g, append(slices.Clone(crossing), secret)...)
		}
		got := ScoreAt(t, g, secret.UUID, groups("b"), PrivacyClocks)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("%s: a's records changed b's private memory:\n got %s\nwant %s", order,
				strings.Join(got, "\n     "), strings.Join(want, "\n     "))
		}
		if ids := search(t, g, memsync.SearchQuery{Text: "launch code zebra", Groups: groups("b")}); !slices.Equal(ids, []string{"b_secret"}) {
			t.Fatalf("%s: b's own search = %v, want b_secret", order, ids)
		}
	}
}

// PrivateRetirement is the supersession the privacy rule allows and
// forbids: c's shared memory "c_shared" that a private record of a
// supersedes (it does not retire it: c cannot see the replacement), a's
// private memory "a_own" that a shared record of a retires, and b's
// private "b_own" that b's own private record retires.
func PrivateRetirement() []memsync.Memory {
	return []memsync.Memory{
		mem("c_shared", "c", 1, "the deploy window is friday", shared),
		mem("a_private_repl", "a", 2, "the deploy window is tuesday", supers("c_shared")),
		mem("a_own", "a", 3, "my draft plan for the deploy", kind(journal.KindDecision)),
		mem("a_shared_repl", "a", 4, "the published plan for the deploy", shared, supers("a_own")),
		mem("b_own", "b", 5, "my deploy notes"),
		mem("b_own_repl", "b", 6, "my newer deploy notes", supers("b_own")),
	}
}

// testPrivateRetirement: a private record retires only memories of its
// own group, a shared record its writer's private ones too, in either
// order; the shared memory a's private record names stays found by c and
// by a.
func testPrivateRetirement(t *testing.T, g memsync.Graph) {
	recs := PrivateRetirement()
	want := map[string]string{"c_shared": "", "a_own": "a_shared_repl", "b_own": "b_own_repl"}
	check := func(order string) {
		for uuid, by := range want {
			if n := get(t, g, uuid); n.ReplacedBy != by || n.InvalidAt.IsZero() != (by == "") {
				t.Fatalf("%s: %s replaced_by=%q invalid_at=%v, want %q", order, uuid, n.ReplacedBy, n.InvalidAt, by)
			}
		}
		for _, reader := range []string{"a", "c"} {
			ids := search(t, g, memsync.SearchQuery{Text: "friday", Groups: groups(reader)})
			if !slices.Equal(ids, []string{"c_shared"}) {
				t.Fatalf("%s: %s searches friday: %v, want c_shared", order, reader, ids)
			}
		}
	}
	apply(t, g, recs...)
	check("one batch")
	dump := Dump(t, g)
	if err := g.Drop(ctx(t)); err != nil {
		t.Fatal(err)
	}
	for i := len(recs) - 1; i >= 0; i-- {
		apply(t, g, recs[i])
	}
	check("reversed")
	if got := Dump(t, g); strings.Join(got, "\n") != strings.Join(dump, "\n") {
		t.Fatalf("order changed the projection:\n%s\nvs\n%s", got, dump)
	}
}
