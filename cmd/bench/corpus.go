package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// corpusBase is the timestamp of the first corpus record.
var corpusBase = time.Date(2026, 9, 1, 7, 0, 0, 0, time.UTC)

// recordSpacing is the mean time between two records of the corpus (all
// agents together): 1M records span about ten days.
const recordSpacing = 900 * time.Millisecond

// lookahead is how many records ahead the generator decides who writes
// when, so that a record can link to (or supersede) one that comes later.
const lookahead = 512

// generator makes a seeded, reproducible stream of valid journal records
// that look like a fleet of agents at work: activity skewed across agents,
// every kind (memsync's own included), a Zipf vocabulary, inline and
// declared entities, tags, links (mostly to recent records, a few forward),
// supersessions (corrections replace the author's own records),
// conflicts, sources, confidence, tiers, sessions, refs and an unknown
// field now and then. Records are in ts order; each carries the journal
// path and line it has when the stream is written out with writeJournals.
type generator struct {
	base      time.Time  // ts of the first record
	rng       *rand.Rand // content
	whenRng   *rand.Rand // who writes when, decided lookahead records ahead
	agents    []string
	agentZipf *rand.Zipf // nil: agents take turns
	wordZipf  *rand.Zipf
	entZipf   *rand.Zipf

	ahead   []skeleton // records decided but not yet made; ahead[0] is record next
	decided int        // skeletons decided so far
	next    int        // index of the next record
	uuids   []string   // uuid of every record made, by index
	byAgent map[string][]int32
	lines   map[string]int // journal path -> lines so far
	seqs    map[string]int // uuid prefix (ts second and agent) -> last sequence
}

// skeleton is what is decided ahead about a record.
type skeleton struct {
	agent string
	ts    time.Time
	uuid  string
}

// newGenerator returns the stream for seed with agents writers. With skew,
// a few agents write most records (Zipf); without, they take turns.
func newGenerator(seed int64, agents int, skew bool) *generator {
	if agents < 1 {
		agents = 1
	}
	g := &generator{
		base:    corpusBase,
		rng:     rand.New(rand.NewSource(seed)),
		whenRng: rand.New(rand.NewSource(seed ^ 0x5eed)),
		agents:  agentNames(agents),
		byAgent: map[string][]int32{},
		lines:   map[string]int{},
		seqs:    map[string]int{},
	}
	if skew && agents > 1 {
		g.agentZipf = rand.NewZipf(g.whenRng, 1.1, 2, uint64(agents-1))
	}
	// The most common word is in about one record in eight, a word of rank
	// 200 in one in seventy: a content vocabulary, stop words aside.
	g.wordZipf = rand.NewZipf(g.rng, 1.05, 30, uint64(len(vocabulary)-1))
	g.entZipf = rand.NewZipf(g.rng, 1.1, 2, uint64(len(entityPool)-1))
	return g
}

// startingAt makes the stream start at base instead of corpusBase.
func (g *generator) startingAt(base time.Time) *generator {
	if g.decided > 0 {
		panic("startingAt after records were decided")
	}
	g.base = base.UTC()
	return g
}

// agentNames names n agents after the roles a fleet has: planner-01, critic-01, ...
func agentNames(n int) []string {
	roles := []string{"planner", "executor", "critic", "researcher", "responder", "reviewer",
		"coder", "tester", "ops", "analyst", "writer", "triage"}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%02d", roles[i%len(roles)], i/len(roles)+1)
	}
	return out
}

// decide makes skeletons until record k is decided.
func (g *generator) decide(k int) {
	for g.decided <= k {
		i := g.decided
		var agent string
		if g.agentZipf != nil {
			agent = g.agents[g.agentZipf.Uint64()]
		} else {
			agent = g.agents[i%len(g.agents)]
		}
		ts := g.base.Add(time.Duration(i)*recordSpacing +
			time.Duration(g.whenRng.Int63n(int64(recordSpacing/time.Microsecond)))*time.Microsecond)
		prefix := "mem_" + journal.UUIDTime(ts) + "_" + agent + "_"
		g.seqs[prefix]++
		g.ahead = append(g.ahead, skeleton{agent: agent, ts: ts, uuid: fmt.Sprintf("%s%04d", prefix, g.seqs[prefix])})
		g.decided++
	}
}

// Kinds weighted by how often agents write them; memsync's own kinds rarely
// (compaction; never promotion, which is valid only as memsync writes it:
// journal.CheckOwner rejects an agent's).
var kindWeights = []struct {
	kind   journal.Kind
	weight int
}{
	{journal.KindObservation, 20}, {journal.KindFact, 14}, {journal.KindDecision, 12}, {journal.KindTask, 10},
	{journal.KindOutcome, 7}, {journal.KindPreference, 6}, {journal.KindReflection, 6}, {journal.KindCorrection, 5},
	{journal.KindProcedure, 5}, {journal.KindSummary, 4}, {journal.KindConflict, 4}, {journal.KindFeedback, 3},
	{journal.KindCompaction, 1},
}

func (g *generator) kind() journal.Kind {
	total := 0
	for _, k := range kindWeights {
		total += k.weight
	}
	n := g.rng.Intn(total)
	for _, k := range kindWeights {
		if n < k.weight {
			return k.kind
		}
		n -= k.weight
	}
	return journal.KindObservation
}

func (g *generator) word() string { return vocabulary[g.wordZipf.Uint64()] }

func (g *generator) entity() string { return entityPool[g.entZipf.Uint64()] }

func (g *generator) sentence(minWords, maxWords int) string {
	n := minWords + g.rng.Intn(maxWords-minWords+1)
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		if g.rng.Intn(14) == 0 {
			b.WriteString(g.entity())
			continue
		}
		b.WriteString(g.word())
	}
	return b.String()
}

// earlier picks a recent earlier record (mean distance ~200), or -1.
func (g *generator) earlier(i int) int {
	if i == 0 {
		return -1
	}
	d := 1 + int(g.rng.ExpFloat64()*200)
	return max(0, i-d)
}

// ownEarlier picks one of agent's last 50 records, or -1.
func (g *generator) ownEarlier(agent string) int {
	own := g.byAgent[agent]
	if len(own) == 0 {
		return -1
	}
	return int(own[len(own)-1-g.rng.Intn(min(len(own), 50))])
}

// later picks a record decided ahead (a forward reference), or "".
func (g *generator) later() string {
	g.decide(g.next + lookahead)
	return g.ahead[1+g.rng.Intn(lookahead)].uuid
}

// nextMemory makes the next record of the stream.
func (g *generator) nextMemory() memsync.Memory {
	g.decide(g.next)
	sk := g.ahead[0]
	i := g.next
	rec := journal.Record{UUID: sk.uuid, TS: sk.ts, Agent: sk.agent, Kind: g.kind(), Scope: journal.ScopePrivate}
	rec.Text = g.sentence(5, 28)
	if g.rng.Intn(10) < 3 {
		rec.Scope = journal.ScopeShared
	}
	switch rec.Kind {
	case journal.KindDecision:
		if g.rng.Intn(10) < 6 {
			rec.Why = g.sentence(4, 12)
		}
	case journal.KindCorrection:
		if j := g.ownEarlier(sk.agent); j >= 0 {
			rec.Supersedes = []string{g.uuids[j]}
		}
	case journal.KindConflict:
		if j := g.earlier(i); j >= 0 {
			rec.ConflictsWith = []string{g.uuids[j]}
		}
	case journal.KindFeedback:
		if j := g.earlier(i); j >= 0 {
			rec.Text = "re " + g.uuids[j] + ": " + rec.Text
			rec.Links = []string{g.uuids[j]}
		}
	}
	if rec.Kind == journal.KindDecision && g.rng.Intn(5) == 0 {
		if j := g.ownEarlier(sk.agent); j >= 0 {
			rec.Supersedes = append(rec.Supersedes, g.uuids[j])
		}
	}
	if g.rng.Intn(50) == 0 && i > 0 {
		rec.ConflictsWith = append(rec.ConflictsWith, g.uuids[g.earlier(i)])
	}
	if g.rng.Intn(10) < 3 {
		for n := 1 + g.rng.Intn(2); n > 0; n-- {
			if j := g.earlier(i); j >= 0 {
				rec.Links = append(rec.Links, g.uuids[j])
			}
		}
	}
	if g.rng.Intn(100) == 0 {
		rec.Links = append(rec.Links, g.later())
	}
	if g.rng.Intn(300) == 0 {
		rec.Supersedes = append(rec.Supersedes, g.later())
	}
	if g.rng.Intn(4) == 0 {
		rec.Entities = []string{g.entity()}
		if g.rng.Intn(3) == 0 {
			rec.Entities = append(rec.Entities, g.entity())
		}
	}
	if g.rng.Intn(10) < 3 {
		for n := 1 + g.rng.Intn(3); n > 0; n-- {
			rec.Tags = append(rec.Tags, g.word())
		}
	}
	if g.rng.Intn(7) == 0 {
		rec.Source = &journal.Source{Type: journal.SourceTypes[g.rng.Intn(len(journal.SourceTypes))],
			Actor: entityPool[g.rng.Intn(peopleCount)]}
		if g.rng.Intn(2) == 0 {
			rec.Source.Context = "session " + g.word()
		}
	}
	if g.rng.Intn(4) == 0 {
		rec.Confidence = journal.Confidences[g.rng.Intn(len(journal.Confidences))]
	}
	if g.rng.Intn(10) == 0 {
		rec.Tier = journal.Tiers[g.rng.Intn(len(journal.Tiers))]
	}
	if g.rng.Intn(12) == 0 {
		rec.MaxAge = journal.MaxAges[g.rng.Intn(len(journal.MaxAges))]
	}
	if g.rng.Intn(10) < 4 {
		rec.Session = fmt.Sprintf("s-%s-%d", sk.agent, i/400)
	}
	if g.rng.Intn(7) == 0 {
		rec.Task = fmt.Sprintf("T-%d", 1000+g.rng.Intn(5000))
	}
	if g.rng.Intn(12) == 0 {
		rec.Refs = []journal.Ref{{Git: fmt.Sprintf("%040x", g.rng.Uint64()), Path: "src/" + g.word() + "/" + g.word() + ".go"}}
	}
	if g.rng.Intn(50) == 0 {
		rec.Extra = map[string]json.RawMessage{"x_client": json.RawMessage(`"bench"`)}
	}
	rec.Links = dropSelf(rec.Links, rec.UUID)
	rec.Supersedes = dropSelf(rec.Supersedes, rec.UUID)
	rec.ConflictsWith = dropSelf(rec.ConflictsWith, rec.UUID)

	path := journalPath(sk.agent, sk.ts)
	g.lines[path]++
	g.uuids = append(g.uuids, sk.uuid)
	g.byAgent[sk.agent] = append(g.byAgent[sk.agent], int32(i))
	g.ahead = g.ahead[1:]
	g.next++
	return memsync.Memory{Record: rec, Path: path, Line: g.lines[path]}
}

// dropSelf removes id (a record may not point at itself) and duplicates.
func dropSelf(ids []string, id string) []string {
	if len(ids) == 0 {
		return nil
	}
	out := ids[:0]
	seen := map[string]bool{id: true}
	for _, v := range ids {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// take makes the next n records.
func (g *generator) take(n int) []memsync.Memory {
	out := make([]memsync.Memory, n)
	for i := range out {
		out[i] = g.nextMemory()
	}
	return out
}

// journalPath is the slash-separated journal file of agent for ts's day.
func journalPath(agent string, ts time.Time) string {
	return "agents/" + agent + "/memory/journal/" + journal.FileName(ts)
}

// writeJournals writes the next n records of g into the journals of the
// repository at root, one canonical line each, streaming (records come in
// ts order, so a day's files are closed when the next day starts).
func writeJournals(root string, g *generator, n int) error {
	files := map[string]*bufio.Writer{}
	closers := map[string]*os.File{}
	day := ""
	closeAll := func() error {
		var first error
		for p, w := range files {
			if err := w.Flush(); err != nil && first == nil {
				first = fmt.Errorf("write %s: %w", p, err)
			}
			if err := closers[p].Close(); err != nil && first == nil {
				first = fmt.Errorf("close %s: %w", p, err)
			}
		}
		clear(files)
		clear(closers)
		return first
	}
	for _, a := range g.agents {
		if err := os.MkdirAll(filepath.Join(root, "agents", a, "memory", "journal"), 0o755); err != nil {
			return err
		}
	}
	for i := 0; i < n; i++ {
		m := g.nextMemory()
		if d := m.TS.Format("2006-01-02"); d != day {
			if err := closeAll(); err != nil {
				return err
			}
			day = d
		}
		w := files[m.Path]
		if w == nil {
			f, err := os.OpenFile(filepath.Join(root, filepath.FromSlash(m.Path)), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
			if err != nil {
				closeAll()
				return err
			}
			w = bufio.NewWriterSize(f, 64<<10)
			files[m.Path], closers[m.Path] = w, f
		}
		w.Write(m.Canonical())
		w.WriteByte('\n')
	}
	return closeAll()
}

// searchQueries makes n queries of 1 to 3 corpus words (drawn as the
// corpus draws them, so common words are common in queries too), each as
// one of agents sees the graph: the shared group and its own.
func searchQueries(seed int64, n int, agents []string) []memsync.SearchQuery {
	g := newGenerator(seed, 1, false)
	out := make([]memsync.SearchQuery, n)
	for i := range out {
		words := make([]string, 1+g.rng.Intn(3))
		for j := range words {
			words[j] = g.word()
		}
		agent := agents[g.rng.Intn(len(agents))]
		out[i] = memsync.SearchQuery{Text: strings.Join(words, " "),
			Groups: journal.ReaderGroups(agent)}
	}
	return out
}

// peopleCount is how many of entityPool's first entries are people.
const peopleCount = 24

var entityPool = func() []string {
	people := []string{"@Shaun", "@Mira", "@Ines", "@Tomas", "@Priya", "@Kenji", "@Ada", "@Lars",
		"@Noor", "@Felix", "@Yara", "@Omar", "@Greta", "@Ravi", "@Chen", "@Lucia", "@Sam", "@Iris",
		"@Bruno", "@Zoe", "@Hana", "@Malik", "@Eva", "@Jon"}
	tags := []string{"#moonshot", "#billing", "#infra", "#oncall", "#q3", "#security", "#perf", "#launch",
		"#migration", "#hiring", "#pricing", "#compliance", "#search", "#mobile", "#data", "#growth",
		"#incident", "#roadmap", "#design", "#support"}
	orgs := []string{"Acme Corp", "Globex", "Initech", "Umbrella", "Hooli", "Stark Industries",
		"Wayne Enterprises", "Tyrell", "Cyberdyne", "Soylent", "Vandelay", "Wonka"}
	wiki := []string{"[[Q3 Plan]]", "[[Runbook]]", "[[Design Doc]]", "[[Postmortem 42]]",
		"[[Pricing Model]]", "[[Release Train]]", "[[Data Retention]]", "[[Onboarding]]"}
	out := append(append(append(people, tags...), orgs...), wiki...)
	if len(people) != peopleCount {
		panic("peopleCount")
	}
	return out
}()

// vocabulary is the corpus's words, most frequent first: domain words,
// then made-up words (product names, jargon) for a long tail.
var vocabulary = func() []string {
	words := strings.Fields(`
deploy database migration latency budget customer invoice release rollback schema
tenant quota alert oncall runbook contract pricing roadmap review benchmark journal
retry backoff graph index cache snapshot postgres kafka service cluster node queue
worker scheduler timeout error warning metric dashboard trace log incident outage
capacity storage disk memory cpu network dns certificate token session login user
account billing payment refund subscription plan feature flag experiment rollout
canary staging production test coverage build pipeline artifact image container
kubernetes helm terraform config secret vault backup restore replica shard partition
query plan optimizer lock deadlock transaction commit isolation consistency durability
api endpoint request response client server gateway proxy load balancer throughput
design doc proposal decision tradeoff risk mitigation owner deadline milestone sprint
ticket bug fix patch hotfix regression flaky ci review approve merge branch rebase
customer support escalation sla slo sli error budget pager rotation handoff summary
vendor contract renewal legal compliance audit privacy gdpr retention policy access
search ranking recall relevance embedding vector fulltext tokenizer analyzer stemming
model prompt agent memory context window tool call planner executor critic responder
cost forecast revenue margin churn growth funnel signup activation retention cohort
mobile ios android web frontend backend latency p99 regression alerting threshold
team hiring onboarding interview offer meeting standup retro planning quarterly okr`)
	syll := []string{"ka", "lo", "mi", "ra", "te", "vo", "zu", "ne", "shi", "pa", "dor", "len",
		"qua", "fi", "bex", "tor", "nim", "sar", "gul", "wen"}
	seen := map[string]bool{}
	out := make([]string, 0, 4000)
	for _, w := range words {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	r := rand.New(rand.NewSource(7))
	for len(out) < 4000 {
		n := 2 + r.Intn(3)
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(syll[r.Intn(len(syll))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}()
