package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/packet"
)

// TestEvidenceRepair: the malformed evidence shapes of the LoCoMo set.
func TestEvidenceRepair(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"D1:3", []string{"D1:3"}},
		{"D8:6; D9:17", []string{"D8:6", "D9:17"}},
		{"D1:3 D1:5", []string{"D1:3", "D1:5"}},
		{"D:11:26", []string{"D11:26"}},
		{"D30:05", []string{"D30:5"}},
		{"D", []string{"D"}},
		{"", nil},
	} {
		var got []string
		for _, id := range splitEvidence(c.in) {
			got = append(got, repairDiaID(id))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q → %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzEvidence(f *testing.F) {
	for _, s := range []string{"D8:6; D9:17", "D:11:26", "D30:05", "D:", "D99999999999999999999:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, id := range splitEvidence(s) {
			if id == "" {
				t.Fatalf("empty id from %q", s)
			}
			_ = repairDiaID(id)
		}
	})
}

// TestRecallScores: recall@5/@10, hit@10 and MRR@10 of one question.
func TestRecallScores(t *testing.T) {
	s := newRecallScores()
	q := recallQuestion{category: 2, evidence: map[string]bool{"a": true, "b": true}}
	s.add(q, []string{"x", "a", "y", "z", "w", "v", "b"})
	for _, c := range []struct {
		name string
		got  float64
		want float64
	}{
		{"recall@5", s.mean(s.r5, 2), 0.5}, {"recall@10", s.mean(s.r10, 0), 1},
		{"hit@10", s.mean(s.hit10, 2), 1}, {"MRR@10", s.mean(s.mrr, 0), 0.5},
	} {
		if math.Abs(c.got-c.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if !math.IsNaN(s.mean(s.r10, 1)) {
		t.Errorf("a category without questions has a mean")
	}
}

// TestBaselineBM25: the baseline drops stopwords and ranks the rarer word higher.
func TestBaselineBM25(t *testing.T) {
	x := newBM25([]journal.Record{
		{UUID: "a", Text: "the cat sat"}, {UUID: "b", Text: "the dog sat"}, {UUID: "c", Text: "a cat and a dog"},
		{UUID: "d", Text: "nothing here"},
	})
	if got := x.search("what is the", 10); len(got) != 0 {
		t.Errorf("stopwords matched %v", got)
	}
	if got := x.search("cat", 10); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("cat: %v", got)
	}
}

// TestPacketUUIDs: every memory uuid of a packet, once, in reading order;
// open questions without a uuid are skipped.
func TestPacketUUIDs(t *testing.T) {
	p := packet.Packet{
		Core:               []packet.Item{{UUID: "core"}},
		HardConstraints:    []packet.Item{{UUID: "pref"}},
		ProceduresToFollow: []packet.Item{{UUID: "proc"}},
		PitfallsToAvoid:    []packet.Item{{UUID: "refl"}},
		RelevantFacts:      []packet.Item{{UUID: "fact1"}, {UUID: "pref"}, {UUID: "fact2"}},
		OpenQuestions:      []packet.Item{{Text: "asked with --question"}, {UUID: "decision"}},
		SelectedMemoryIDs:  []string{"pref", "only-selected"},
	}
	want := []string{"core", "pref", "proc", "refl", "fact1", "fact2", "decision", "only-selected"}
	if got := packetUUIDs(p); !slices.Equal(got, want) {
		t.Errorf("packetUUIDs = %q, want %q", got, want)
	}
	if got := packetUUIDs(packet.Packet{}); len(got) != 0 {
		t.Errorf("empty packet: %q", got)
	}
}

// TestRecallArgs: the command lines are the user's, with the day-after
// clock only where asked.
func TestRecallArgs(t *testing.T) {
	asOf := time.Date(2023, 10, 22, 9, 55, 0, 0, time.UTC)
	door := []string{"--graph", "embedded"}
	for _, c := range []struct {
		name     string
		ask      recallAsk
		question string
		want     []string
	}{
		{"search, day after", recallAsk{false, clockDayAfter}, "When did Mel paint?",
			[]string{"search", "When did Mel paint?", "--agent", "locomo", "--limit", "10", "--json", "--repo", "/r", "--as-of", "2023-10-22T09:55:00Z", "--graph", "embedded"}},
		{"search, today", recallAsk{false, clockToday}, "When did Mel paint?",
			[]string{"search", "When did Mel paint?", "--agent", "locomo", "--limit", "10", "--json", "--repo", "/r", "--graph", "embedded"}},
		{"search, a question that looks like a flag", recallAsk{false, clockToday}, "-x?",
			[]string{"search", "--agent", "locomo", "--limit", "10", "--json", "--repo", "/r", "--graph", "embedded", "--", "-x?"}},
		{"packet, day after", recallAsk{true, clockDayAfter}, "When did Mel paint?",
			[]string{"packet", "--role", "planner", "--agent", "locomo", "--goal", "When did Mel paint?", "--json", "--repo", "/r", "--as-of", "2023-10-22T09:55:00Z", "--graph", "embedded"}},
		{"packet, today", recallAsk{true, clockToday}, "When did Mel paint?",
			[]string{"packet", "--role", "planner", "--agent", "locomo", "--goal", "When did Mel paint?", "--json", "--repo", "/r", "--graph", "embedded"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := recallArgs(c.ask, c.question, "/r", asOf, door); !slices.Equal(got, c.want) {
				t.Errorf("recallArgs =\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

// TestAnswerUUIDs: the ranked uuids of each command's JSON, and a refusal
// of an answer from the wrong door (a graph door answering offline, the
// offline door answering from a graph, a document without "offline").
func TestAnswerUUIDs(t *testing.T) {
	for _, c := range []struct {
		name        string
		packet      bool
		out         string
		wantOffline bool
		hybrid      bool
		want        []string
		wantErr     bool
	}{
		{"search", false, `{"offline": false, "results": [{"uuid": "b"}, {"uuid": "a"}]}`, false, false, []string{"b", "a"}, false},
		{"search, nothing found", false, `{"offline": false, "results": []}`, false, false, nil, false},
		{"search offline on the offline door", false, `{"offline": true, "results": [{"uuid": "a"}]}`, true, false, []string{"a"}, false},
		{"search offline on a graph door", false, `{"offline": true, "results": [{"uuid": "a"}]}`, false, false, nil, true},
		{"search from a graph on the offline door", false, `{"offline": false, "results": []}`, true, false, nil, true},
		{"search without offline", false, `{"results": []}`, false, false, nil, true},
		{"search, not JSON", false, `no results`, false, false, nil, true},
		{"packet", true, `{"offline": false, "relevant_facts": [{"uuid": "f"}], "selected_memory_ids": ["f", "g"]}`, false, false, []string{"f", "g"}, false},
		{"packet offline on a graph door", true, `{"offline": true}`, false, false, nil, true},
		{"hybrid search offline, saying so", false, `{"offline": true, "offline_reason": "neo4j graph: down; hybrid recall: the journals embedded with m", "results": [{"uuid": "a"}]}`, true, true, []string{"a"}, false},
		{"hybrid search offline, lexical only", false, `{"offline": true, "offline_reason": "neo4j graph: down", "results": [{"uuid": "a"}]}`, true, true, nil, true},
		{"lexical search offline, claiming hybrid", false, `{"offline": true, "offline_reason": "neo4j graph: down; hybrid recall: the journals embedded with m", "results": []}`, true, false, nil, true},
		{"hybrid packet offline", true, `{"offline": true, "selected_memory_ids": ["f"]}`, true, true, []string{"f"}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := answerUUIDs(c.packet, []byte(c.out), c.wantOffline, c.hybrid)
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, want error %v", err, c.wantErr)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("uuids = %q, want %q", got, c.want)
			}
		})
	}
}

// TestForEach: every index once, on at most the workers asked for; after
// an error no new call starts and that error is returned.
func TestForEach(t *testing.T) {
	var mu sync.Mutex
	calls := map[int]int{}
	running, most := 0, 0
	err := forEach(context.Background(), 2, 50, func(i int) error {
		mu.Lock()
		calls[i]++
		running++
		most = max(most, running)
		mu.Unlock()
		mu.Lock()
		running--
		mu.Unlock()
		return nil
	})
	if err != nil || len(calls) != 50 || most > 2 {
		t.Fatalf("err %v, %d indices called, %d at once", err, len(calls), most)
	}
	for i, n := range calls {
		if n != 1 {
			t.Errorf("index %d called %d times", i, n)
		}
	}

	boom := errors.New("boom")
	var after atomic.Int32
	failed := make(chan struct{})
	err = forEach(context.Background(), 1, 100, func(i int) error {
		select {
		case <-failed:
			after.Add(1)
		default:
		}
		if i == 3 {
			close(failed)
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Errorf("err = %v, want boom", err)
	}
	if n := after.Load(); n != 0 {
		t.Errorf("%d calls after the error", n)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := forEach(ctx, 2, 10, func(int) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}

// TestRecallTableDeltas: a search row shows its distance to its door's
// diagnostic and the target's verdict (0.02 below passes, more fails; above
// passes); packet, diagnostic and n/a rows are not judged.
func TestRecallTableDeltas(t *testing.T) {
	q := func(cat int, ev ...string) recallQuestion {
		m := map[string]bool{}
		for _, e := range ev {
			m[e] = true
		}
		return recallQuestion{category: cat, evidence: m}
	}
	scored := func(door, name, clock string, answers ...[]string) *recallPath {
		p := &recallPath{door: door, name: name, clock: clock, scores: newRecallScores()}
		for i, a := range answers {
			p.scores.add(q(1+i%4, fmt.Sprint(i)), a)
		}
		return p
	}
	const n = 100
	all := make([][]string, n)      // every question answered at rank 1
	missTwo := make([][]string, n)  // two of a hundred missed: 0.02 below
	missFive := make([][]string, n) // five missed
	for i := range n {
		all[i] = []string{fmt.Sprint(i)}
		missTwo[i], missFive[i] = all[i], all[i]
		if i < 2 {
			missTwo[i] = nil
		}
		if i < 5 {
			missFive[i] = nil
		}
	}
	diag := scored("embedded", "diagnostic", "–", missTwo...)
	within := scored("embedded", "`memsync search`", "day after", all...)
	within.diag = diag
	below := scored("embedded", "`memsync search`", "today", missFive...)
	below.diag = diag
	edge := scored("offline", "`memsync search`", "day after", missTwo...)
	edge.diag = scored("offline", "diagnostic", "–", all...)
	pkt := scored("embedded", "`memsync packet`", "today")
	na := &recallPath{door: "Neo4j", name: "`memsync search`", clock: "today", na: "no server", diag: &recallPath{na: "no server"}}
	table, checks := recallTable([]*recallPath{within, below, edge, pkt, diag, na}, 1, n, "none")
	for _, want := range []string{
		"| embedded | `memsync search` | day after | 1.000 | 1.000 | 1.000 | 1.000 | 0.000 / 0.000 | +0.020 / +0.020 ✅ |",
		"| embedded | `memsync search` | today | 0.950 | 0.950 | 0.950 | 0.950 | 0.000 / 0.000 | -0.030 / -0.030 ❌ |",
		"| offline | `memsync search` | day after | 0.980 | 0.980 | 0.980 | 0.980 | 0.000 / 0.000 | -0.020 / -0.020 ✅ |",
		"| embedded | `memsync packet` | today | – | – | – | – | – / – |  |",
		"| Neo4j | `memsync search` | today | n/a (no server) |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	var verdicts []bool
	for _, c := range checks {
		verdicts = append(verdicts, c.met)
	}
	if !slices.Equal(verdicts, []bool{true, false, true}) {
		t.Errorf("checks %+v, want met, missed, met", checks)
	}
}

// TestSessionLevel: the session-level metric counts a question found when
// any of its evidence sessions is among the sessions of the first 5 (10)
// turns, whether or not the turn is evidence.
func TestSessionLevel(t *testing.T) {
	session := map[string]string{"a": "s1", "b": "s1", "c": "s2", "d": "s3"}
	q := recallQuestion{category: 1, evidence: map[string]bool{"a": true}, sessions: map[string]bool{"s1": true}, session: session}
	s := newRecallScores()
	s.add(q, []string{"c", "b"})                               // b: same session as the evidence, not evidence
	s.add(q, []string{"c", "d", "c", "d", "c", "d", "b"})      // at rank 7: within 10 only
	s.add(q, []string{"c", "d", "c", "d", "c", "d", "c", "d"}) // never
	if got5, got10 := s.mean(s.s5, 0), s.mean(s.s10, 0); math.Abs(got5-1.0/3) > 1e-9 || math.Abs(got10-2.0/3) > 1e-9 {
		t.Fatalf("session any@5 %v, any@10 %v: want 1/3 and 2/3", got5, got10)
	}
	if s.mean(s.r10, 0) != 0 {
		t.Fatalf("turn-level recall %v, want 0", s.mean(s.r10, 0))
	}
}
