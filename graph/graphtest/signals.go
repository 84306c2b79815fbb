package graphtest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"regexp"
	"sort"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

// SignalCorpus is Corpus(seed, n) plus the records that move importance
// (SPEC §7): supports, outcomes with results, and feedback flags,
// spread over 60 days so that decay, max_age and status all come into
// play. Some point at records that come later. The same seed and n always
// give the same corpus.
func SignalCorpus(seed int64, n int) []memsync.Memory {
	out := Corpus(seed, n)
	rng := rand.New(rand.NewSource(seed + 1))
	lines := map[string]int{}
	for _, m := range out {
		lines[m.Path] = max(lines[m.Path], m.Line)
	}
	agents := []string{"alice", "bob", "carol", "dave", "erin"}
	extra := n / 2
	for i := 0; i < extra; i++ {
		agent := agents[rng.Intn(len(agents))]
		ts := Base.Add(time.Duration(rng.Intn(60*24)) * time.Hour).Add(time.Duration(i) * time.Millisecond)
		target := out[rng.Intn(n)].UUID
		rec := journal.Record{
			UUID: fmt.Sprintf("sig_%s_%s_%04d", journal.UUIDTime(ts), agent, i), TS: ts, Agent: agent,
			Scope: journal.ScopeShared, Text: "signal " + words[rng.Intn(len(words))],
		}
		set := func(field string, v any) {
			b, _ := json.Marshal(v)
			if rec.Extra == nil {
				rec.Extra = map[string]json.RawMessage{}
			}
			rec.Extra[field] = b
		}
		switch rng.Intn(4) {
		case 0:
			rec.Kind = journal.KindFact
			set(journal.FieldSupports, []string{target})
		case 1:
			rec.Kind = journal.KindOutcome
			rec.Links = []string{target}
			set(journal.FieldResult, []string{journal.ResultSuccess, journal.ResultFailure, journal.ResultMixed}[rng.Intn(3)])
		case 2:
			rec.Kind = journal.KindFeedback
			rec.Links = []string{target}
			rec.Source = &journal.Source{Type: "told", Actor: "Shaun"}
			set(journal.FieldFeedback, journal.Feedbacks[rng.Intn(len(journal.Feedbacks))])
		default:
			rec.Kind = journal.KindDecision
			rec.Links = []string{target}
			if rng.Intn(2) == 0 {
				rec.ConflictsWith = []string{out[rng.Intn(n)].UUID}
			}
		}
		if rng.Intn(5) == 0 {
			rec.Tier = journal.Tiers[rng.Intn(len(journal.Tiers))]
		}
		path := fmt.Sprintf("agents/%s/memory/journal/%s", agent, journal.FileName(ts))
		lines[path]++
		out = append(out, memsync.Memory{Record: rec, Path: path, Line: lines[path]})
	}
	return out
}

// Oracle answers memsync.SignalReader from a set of records held in
// memory, by SPEC §4's definitions: what every backend and the offline
// path must agree with.
type Oracle struct {
	nodes map[string]memsync.Node
}

// NewOracle indexes corpus (each uuid as first given).
func NewOracle(corpus []memsync.Memory) *Oracle {
	o := &Oracle{nodes: map[string]memsync.Node{}}
	for _, m := range corpus {
		if _, ok := o.nodes[m.UUID]; !ok {
			o.nodes[m.UUID] = memsync.Node{Memory: m, GroupID: m.Record.GroupID()}
		}
	}
	for _, src := range o.nodes {
		for _, id := range src.Record.Supersedes {
			n, ok := o.nodes[id]
			if !ok {
				continue
			}
			memsync.Retire(&n, &src.Record)
			o.nodes[id] = n
		}
	}
	return o
}

// Get implements memsync.SignalReader.
func (o *Oracle) Get(_ context.Context, uuids []string) (map[string]memsync.Node, error) {
	out := map[string]memsync.Node{}
	for _, id := range uuids {
		if n, ok := o.nodes[id]; ok {
			out[id] = n
		}
	}
	return out, nil
}

// Incoming implements memsync.SignalReader.
func (o *Oracle) Incoming(_ context.Context, uuids []string) ([]memsync.Reference, error) {
	want := map[string]bool{}
	for _, id := range uuids {
		want[id] = true
	}
	var out []memsync.Reference
	for _, n := range o.nodes {
		out = append(out, read.References(n, want)...)
	}
	return out, nil
}

// ScoreClocks are the clocks at which Scores evaluates: within the
// corpus, at its end, and long after.
var ScoreClocks = []time.Time{Base.Add(10 * 24 * time.Hour), Base.Add(61 * 24 * time.Hour), Base.Add(200 * 24 * time.Hour)}

// Scores is, for every memory of corpus that r holds, its importance,
// confidence, status, max_age and effects at each of ScoreClocks, as
// one line per memory and clock, sorted: two readers that agree give
// equal slices.
func Scores(t testing.TB, r memsync.SignalReader, corpus []memsync.Memory) []string {
	t.Helper()
	ids := make([]string, 0, len(corpus))
	for _, m := range corpus {
		ids = append(ids, m.UUID)
	}
	nodes, err := r.Get(context.Background(), ids)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	list := make([]memsync.Node, 0, len(nodes))
	for _, n := range nodes {
		list = append(list, n)
	}
	var out []string
	for _, clock := range ScoreClocks {
		scored, err := read.ScoreNodes(context.Background(), r, list, []string{journal.SharedGroup}, memsync.AsOf(clock))
		if err != nil {
			t.Fatalf("ScoreNodes: %v", err)
		}
		for id, s := range scored {
			effects := ""
			for _, e := range s.Result.Effects {
				effects += e.UUID + " " + e.Text() + "; "
			}
			out = append(out, fmt.Sprintf("%s %s imp=%.4f conf=%.4f %s %s fresh=%.4f [%s]", clock.Format("01-02"), id,
				s.Result.Importance, s.Result.Confidence, s.Result.Status, s.Result.MaxAgeLabel, s.Freshness, effects))
		}
	}
	sort.Strings(out)
	return out
}

// testSignalsShuffled: a corpus with every kind of signal, replayed in
// shuffled order and odd batches, gives the importance, confidence and
// status the oracle gives, so both backends (and the offline path, tested
// against the same oracle) agree.
func testSignalsShuffled(t *testing.T, g memsync.Graph) {
	corpus := SignalCorpus(11, 300)
	want := Scores(t, NewOracle(corpus), corpus)
	shuffled := append([]memsync.Memory(nil), corpus...)
	rand.New(rand.NewSource(3)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for i := 0; i < len(shuffled); i += 41 {
		apply(t, g, shuffled[i:min(i+41, len(shuffled))]...)
	}
	got := Scores(t, g, corpus)
	if len(got) != len(want) {
		t.Fatalf("%d scores, want %d", len(got), len(want))
	}
	moved := 0
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("score %d differs:\n got %s\nwant %s", i, got[i], want[i])
		}
		if !regexpDefault.MatchString(want[i]) {
			moved++
		}
	}
	if moved < len(want)/4 {
		t.Fatalf("only %d of %d scores moved from the defaults: the corpus does not exercise the rule", moved, len(want))
	}
}

// regexpDefault matches a score line of a memory no event moved.
var regexpDefault = regexp.MustCompile(`imp=0\.5000 conf=0\.6000 active .* \[\]$`)

// testIncomingBeforeTarget: references (links, supports, conflicts) stored
// before their target count once it lands; a record naming it twice
// (links and supports) is one reference per relation.
func testIncomingBeforeTarget(t *testing.T, g memsync.Graph) {
	sup := mem("m2", "bob", 2, "corroborates", links("m1"), shared)
	sup.Extra = map[string]json.RawMessage{journal.FieldSupports: json.RawMessage(`["m1"]`)}
	apply(t, g, sup, mem("m3", "carol", 3, "disagrees", confl("m1")))
	apply(t, g, mem("m1", "alice", 1, "the claim", shared))
	refs, err := g.Incoming(ctx(t), []string{"m1", "absent"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range refs {
		got = append(got, r.Target+" "+r.Relation+" "+r.Source.UUID+" "+r.Source.Record.Feedback())
	}
	sort.Strings(got)
	want := []string{"m1 CONFLICTS_WITH m3 ", "m1 LINKS_TO m2 ", "m1 SUPPORTS m2 "}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Incoming = %q, want %q", got, want)
	}
}
