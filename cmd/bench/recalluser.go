package main

// The recall figure measures what a user gets (issue 24, item 8): every
// question is asked of the built memsync binaries, `memsync search` and
// `memsync packet`, exactly as a user types them, at the two clocks of the
// locomo-dev README, on each door into the memory (the embedded store,
// Neo4j, and offline: the journals alone). The backends' own search stays
// beside them as a labelled diagnostic, and a plain BM25 as the baseline.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/graph/neo4j"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/embed"
	"github.com/memsync/memsync/memsync/offline"
	"github.com/memsync/memsync/memsync/packet"
	"github.com/memsync/memsync/memsync/read"
)

// offlineURI is a Bolt address where no server listens: the offline door
// points the command at it, so that it finds its configured Neo4j down and
// answers from the journals, as it does for a user whose server is down.
const offlineURI = "bolt://127.0.0.1:1"

// recallDayAfter is how long after a conversation's last turn the "day
// after" clock reads (the README's "two days after the last session").
const recallDayAfter = 48 * time.Hour

// recallClock is one of the README's two clocks.
type recallClock int

const (
	clockDayAfter recallClock = iota // --as-of two days after the last turn
	clockToday                       // no --as-of: the present
)

func (c recallClock) String() string {
	if c == clockToday {
		return "today"
	}
	return "day after"
}

// recallAsk is one way a question is put to the command.
type recallAsk struct {
	packet bool // memsync packet --role planner; else memsync search
	clock  recallClock
}

// recallAsks are the command rows of each door, in table order.
var recallAsks = []recallAsk{{false, clockDayAfter}, {false, clockToday}, {true, clockDayAfter}, {true, clockToday}}

func (a recallAsk) name() string {
	if a.packet {
		return "`memsync packet` (planner, every uuid)"
	}
	return "`memsync search`"
}

// recallPath is one row of the table: one way of answering the questions.
type recallPath struct {
	door   string // embedded, Neo4j, offline; "" for the baseline
	name   string
	clock  string // "–" when the path has no clock
	na     string // why the row was not measured
	scores *recallScores
	diag   *recallPath // the diagnostic a search row is held to; nil for others
}

// recallDoor is one way into the memory: a backend the command reads, or
// none (offline, the journals alone).
type recallDoor struct {
	name    string
	col     *column  // nil: offline
	args    []string // selecting the door on the command line
	offline bool     // the command must answer offline, and only this door may
	asks    []*recallPath
	diag    *recallPath
	wall    time.Duration // spent running the commands
	execs   int
	emb     memsync.Embedder // the model of the figure (--recall-embedder); nil: lexical only
	// search answers with results, and those of them with a vector part
	// (a hit whose retrieval has a vector rank): proof the model was used
	answered, vectored int
	searchMS           []float64     // wall of each `memsync search` process, ms
	graph              memsync.Graph // Neo4j opened with emb; nil: the column's own
}

// recallWorkers is how many commands run at once: one per usable CPU.
func recallWorkers() int { return max(runtime.GOMAXPROCS(0), 1) }

// measureRecall runs the LoCoMo recall benchmark and writes its table to
// w: each conversation in its own memory repository, projected by the
// engine into each backend; each question asked of the command on every
// door at both clocks, of each backend's own search (the diagnostic) and
// of a plain BM25 baseline.
func (b *bench) measureRecall(ctx context.Context, w io.Writer) error {
	o := b.opts
	started := time.Now()
	cases, err := loadLocomoOnly(o.recallData, o.recallConversations, o.recallSessions, o.recallOnly)
	if os.IsNotExist(err) {
		b.logf("recall: %s is missing: skipped (the LoCoMo dev set lives in ../shared beside the repository)", o.recallData)
		fmt.Fprintf(w, "recall: skipped, %s not found\n", o.recallData)
		return nil
	}
	if err != nil {
		return fmt.Errorf("recall: %w", err)
	}
	if b.bin == "" {
		if err := b.build(ctx); err != nil {
			return err
		}
	}
	emb, err := recallEmbedder(o.recallEmbedder)
	if err != nil {
		return fmt.Errorf("recall: %w", err)
	}
	model := []string{"--embedder", o.recallEmbedder}
	var doors []*recallDoor
	for _, c := range b.columns {
		d := newRecallDoor(c.b.name, c, append(c.b.cliArgs(), model...), c.na)
		d.emb = emb
		if c.b.neo != nil && c.na == "" && emb != nil {
			// The run's own Neo4j graph embeds with --vectors' test model, if any:
			// the figure projects through one that embeds with its own.
			cfg := c.b.neo.cfg
			cfg.Embedder = emb
			g, err := neo4j.Open(ctx, cfg, nil)
			if err != nil {
				return fmt.Errorf("recall: neo4j with %s: %w", emb.Version(), err)
			}
			defer g.Close()
			d.graph = g
		}
		doors = append(doors, d)
	}
	off := newRecallDoor("offline", nil, append([]string{"--graph", "neo4j", "--neo4j-uri", offlineURI}, model...), "")
	off.emb = emb
	doors = append(doors, off)
	if emb != nil {
		b.logf("recall: every door embeds with %s (--embedder %s)", emb.Version(), o.recallEmbedder)
	}
	base := &recallPath{name: "BM25 baseline (same turns, in process)", clock: "–", scores: newRecallScores()}

	questions, dropped, repaired, split := 0, 0, 0, 0
	for _, rc := range cases {
		root, err := b.recallRepo(ctx, rc)
		if err != nil {
			return err
		}
		for _, d := range doors {
			if d.diag.na != "" {
				continue
			}
			b.logf("recall: conversation %s (%d questions) on %s", rc.id, len(rc.questions), d.name)
			if err := b.recallOn(ctx, d, rc, root); err != nil {
				return fmt.Errorf("recall on %s, conversation %s: %w", d.name, rc.id, err)
			}
		}
		bm := newBM25(rc.records)
		for _, q := range rc.questions {
			base.scores.add(q, bm.search(q.text, recallK))
		}
		questions += len(rc.questions)
		dropped += rc.dropped
		repaired += rc.repaired
		split += rc.split
	}
	var paths []*recallPath
	for _, d := range doors {
		paths = append(paths, d.asks...)
		paths = append(paths, d.diag)
	}
	paths = append(paths, base)
	table, checks := recallTable(paths, len(cases), questions, fmt.Sprintf("%d split, %d repaired, %d dropped", split, repaired, dropped))
	fmt.Fprint(w, table)
	fmt.Fprintf(w, "\nEmbedder: %s.\n", recallModelNote(o.recallEmbedder, emb))
	if o.recallSessions {
		fmt.Fprintf(w, "Records: each carries its LoCoMo session as `session`.\n")
	} else {
		fmt.Fprintf(w, "Records: no `session` field (--recall-sessions=false).\n")
	}
	var vec []string
	for _, d := range doors {
		if d.execs > 0 {
			vec = append(vec, fmt.Sprintf("%s %d of %d", d.name, d.vectored, d.answered))
		}
	}
	fmt.Fprintf(w, "Search answers with a vector part (a hit with a vector_rank): %s.\n", strings.Join(vec, ", "))
	var walls []string
	for _, d := range doors {
		if len(d.searchMS) > 0 {
			walls = append(walls, fmt.Sprintf("%s p50 %s / p95 %s ms", d.name, millis(percentile(d.searchMS, 50)), millis(percentile(d.searchMS, 95))))
		}
	}
	fmt.Fprintf(w, "`memsync search` wall per process, %d at a time: %s.\n", recallWorkers(), strings.Join(walls, ", "))
	fmt.Fprintf(w, "\nTarget (issue 24): `memsync search` recall@10 and hit@10 no more than 0.02 below the diagnostic of its door, at both clocks: %s.\n", summary(checks))
	var times []string
	for _, d := range doors {
		if d.execs > 0 {
			times = append(times, fmt.Sprintf("%s %s commands in %s s", d.name, thousands(float64(d.execs)), seconds(d.wall.Seconds())))
		}
	}
	fmt.Fprintf(w, "Elapsed: %s s in all (build, repositories, projection, diagnostics, commands); %s; %d at a time (GOMAXPROCS), one process per question.\n",
		seconds(time.Since(started).Seconds()), strings.Join(times, ", "), recallWorkers())
	return nil
}

// newRecallDoor makes a door and its rows; na says why it is not measured.
func newRecallDoor(name string, col *column, args []string, na string) *recallDoor {
	d := &recallDoor{name: name, col: col, args: args, offline: col == nil}
	diagName := "diagnostic: Graph.Search (below the command)"
	if d.offline {
		diagName = "diagnostic: offline.Search (below the command)"
	}
	d.diag = &recallPath{door: name, name: diagName, clock: "–", na: na, scores: newRecallScores()}
	for _, a := range recallAsks {
		p := &recallPath{door: name, name: a.name(), clock: a.clock.String(), na: na, scores: newRecallScores()}
		if !a.packet {
			p.diag = d.diag
		}
		d.asks = append(d.asks, p)
	}
	return d
}

// recallRepo makes rc's memory repository once, as a user's is made
// (`memsync init`, then the turns as journal lines, committed to git), and
// returns its root.
func (b *bench) recallRepo(ctx context.Context, rc *recallCase) (string, error) {
	dir := b.tmp
	if b.opts.recallRepos != "" {
		dir = b.opts.recallRepos
	}
	root := filepath.Join(dir, "recall-"+rc.id)
	if _, err := os.Stat(root); err == nil {
		return root, nil
	}
	fail := func(err error) (string, error) {
		os.RemoveAll(root)
		return "", fmt.Errorf("recall repository %s: %w", rc.id, err)
	}
	if out, err := b.memsync(ctx, "init", "--repo", root, "--agent", recallAgent); err != nil {
		return fail(fmt.Errorf("memsync init: %w: %s", err, out))
	}
	if err := writeRecallRepo(root, rc); err != nil {
		return fail(err)
	}
	for _, args := range [][]string{
		{"add", "-A"},
		{"-c", "user.name=memsync bench", "-c", "user.email=bench@memsync.invalid", "commit", "-q", "-m", "LoCoMo conversation " + rc.id},
	} {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", root}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fail(fmt.Errorf("git %s: %w: %s", args[len(args)-1], err, out))
		}
	}
	return root, nil
}

// memsync runs the built command with args and returns its combined output.
func (b *bench) memsync(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, b.bin, args...)
	cmd.Env = childEnv()
	return cmd.CombinedOutput()
}

// recallOn measures one conversation on one door: projects its repository
// into the door's graph (none offline), scores the diagnostic, then asks
// every question of the command, at both clocks, search and packet.
func (b *bench) recallOn(ctx context.Context, d *recallDoor, rc *recallCase, root string) error {
	layout := memsync.Layout{Root: root}
	if d.offline {
		for _, q := range rc.questions {
			hits, err := offline.SearchWith(ctx, layout, recallQuery(q.text), d.emb)
			if err != nil {
				return fmt.Errorf("offline.Search %q: %w", q.text, err)
			}
			d.diag.scores.add(q, hitUUIDs(hits))
		}
		return b.recallCommands(ctx, d, rc, root)
	}
	// Neo4j holds one conversation at a time: exclusive drops it before and after.
	return d.col.b.exclusive(ctx, func() error {
		g, release, err := recallGraph(d.col.b, layout, d.emb, d.graph)
		if err != nil {
			return err
		}
		err = projectAndDiagnose(ctx, g, rc, root, d.diag.scores)
		release() // the embedded store is closed before the commands open it
		if err != nil {
			return err
		}
		return b.recallCommands(ctx, d, rc, root)
	})
}

// recallGraph is the graph the command reads for the repository at
// layout: its own embedded store (<repo>/.memsync), embedding with emb, or
// the Neo4j server (through neo when set, else the run's own graph).
func recallGraph(be *backend, layout memsync.Layout, emb memsync.Embedder, neo memsync.Graph) (memsync.Graph, func(), error) {
	if be.neo != nil {
		if neo != nil {
			return neo, func() {}, nil
		}
		return be.neo.graph, func() {}, nil
	}
	g, err := embedded.Open(layout.LocalDir(), nil, embedded.WithEmbedder(emb))
	if err != nil {
		return nil, nil, err
	}
	return g, func() { g.Close() }, nil
}

// projectAndDiagnose projects the repository at root into g with the
// engine (as `memsync rebuild` does) and scores every question of rc
// against g's own search.
func projectAndDiagnose(ctx context.Context, g memsync.Graph, rc *recallCase, root string, s *recallScores) error {
	eng, err := memsync.New(memsync.Options{Root: root, Graph: g, BatchSize: engineBatch})
	if err != nil {
		return err
	}
	rep, err := eng.Rebuild(ctx, nil)
	if err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	if rep.Projected != len(rc.records) || rep.Rejected != 0 {
		return fmt.Errorf("projected %d turns, rejected %d, want %d and 0", rep.Projected, rep.Rejected, len(rc.records))
	}
	for _, q := range rc.questions {
		hits, err := read.Search(ctx, g, recallQuery(q.text))
		if err != nil {
			return fmt.Errorf("Graph.Search %q: %w", q.text, err)
		}
		s.add(q, hitUUIDs(hits))
	}
	return nil
}

// recallCommands asks every question of rc of the command, each ask of
// recallAsks, one process per question on recallWorkers workers, and
// scores the answers in question order.
func (b *bench) recallCommands(ctx context.Context, d *recallDoor, rc *recallCase, root string) error {
	asOf := rc.last.Add(recallDayAfter)
	ranked := make([][]string, len(rc.questions)*len(recallAsks))
	vectored := make([]int, len(ranked)) // -1: no results; 1: a hit has a vector rank
	walls := make([]float64, len(ranked))
	t0 := time.Now()
	err := forEach(ctx, recallWorkers(), len(ranked), func(j int) error {
		q, a := rc.questions[j/len(recallAsks)], recallAsks[j%len(recallAsks)]
		args := recallArgs(a, q.text, root, asOf, d.args)
		start := time.Now()
		out, err := b.runRecall(ctx, args)
		if err != nil {
			return err
		}
		walls[j] = float64(time.Since(start)) / float64(time.Millisecond)
		ranked[j], err = answerUUIDs(a.packet, out, d.offline, d.emb != nil)
		if err != nil {
			return fmt.Errorf("memsync %s: %w", strings.Join(args, " "), err)
		}
		if !a.packet {
			vectored[j] = vectorPart(out)
		}
		return nil
	})
	d.wall += time.Since(t0)
	d.execs += len(ranked)
	if err != nil {
		return err
	}
	for j, uuids := range ranked {
		d.asks[j%len(recallAsks)].scores.add(rc.questions[j/len(recallAsks)], uuids)
		if recallAsks[j%len(recallAsks)].packet {
			continue
		}
		d.searchMS = append(d.searchMS, walls[j])
		if vectored[j] >= 0 {
			d.answered++
			d.vectored += vectored[j]
		}
	}
	return nil
}

// vectorPart reads a search's JSON: -1 when it found nothing, 1 when a
// hit's retrieval has a vector rank (the model ranked it), else 0.
func vectorPart(out []byte) int {
	var s struct {
		Results []struct {
			Retrieval *struct {
				VectorRank int `json:"vector_rank"`
			} `json:"retrieval"`
		} `json:"results"`
	}
	if json.Unmarshal(out, &s) != nil || len(s.Results) == 0 {
		return -1
	}
	for _, r := range s.Results {
		if r.Retrieval != nil && r.Retrieval.VectorRank > 0 {
			return 1
		}
	}
	return 0
}

// runRecall runs one command and returns its stdout; a failure carries
// the command line and the first line of its stderr.
func (b *bench) runRecall(ctx context.Context, args []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, b.bin, args...)
	cmd.Env = childEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("memsync %s: %w: %s", strings.Join(args, " "), err, firstLine(stderr.String()))
	}
	return out, nil
}

// recallArgs is the command line of one ask, as a user types it:
// `memsync search QUESTION --agent A --limit 10 --json` or `memsync packet
// --role planner --agent A --goal QUESTION --json`, with --as-of at the
// day-after clock, the repository, and the door's graph flags.
func recallArgs(a recallAsk, question, repo string, asOf time.Time, door []string) []string {
	var args []string
	if a.packet {
		args = []string{"packet", "--role", "planner", "--agent", recallAgent, "--goal", question, "--json"}
	} else if strings.HasPrefix(question, "-") {
		args = []string{"search", "--agent", recallAgent, "--limit", fmt.Sprint(recallK), "--json", "--", question}
	} else {
		args = []string{"search", question, "--agent", recallAgent, "--limit", fmt.Sprint(recallK), "--json"}
	}
	extra := []string{"--repo", repo}
	if a.clock == clockDayAfter {
		extra = append(extra, "--as-of", asOf.UTC().Format(time.RFC3339))
	}
	extra = append(extra, door...)
	if i := indexOf(args, "--"); i >= 0 {
		return append(append(args[:i:i], extra...), args[i:]...)
	}
	return append(args, extra...)
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

// searchAnswer is the part of `memsync search --json` the figure reads.
type searchAnswer struct {
	Offline *bool  `json:"offline"`
	Reason  string `json:"offline_reason"`
	Results []struct {
		UUID string `json:"uuid"`
	} `json:"results"`
}

// answerUUIDs reads the ranked memory uuids of one command's JSON. It
// fails when the command answered offline on a graph's door, or from a
// graph on the offline door, or (hybrid: an embedder is on) a search
// answered offline without saying its recall was hybrid: that row would
// measure the wrong thing.
func answerUUIDs(isPacket bool, out []byte, wantOffline, hybrid bool) ([]string, error) {
	var uuids []string
	var offline bool
	var reason string
	if isPacket {
		var p packet.Packet
		if err := json.Unmarshal(out, &p); err != nil {
			return nil, fmt.Errorf("read its JSON: %w: %.200s", err, out)
		}
		uuids, offline = packetUUIDs(p), p.Offline
	} else {
		var s searchAnswer
		if err := json.Unmarshal(out, &s); err != nil {
			return nil, fmt.Errorf("read its JSON: %w: %.200s", err, out)
		}
		if s.Offline == nil {
			return nil, fmt.Errorf("its JSON has no \"offline\": %.200s", out)
		}
		offline, reason = *s.Offline, s.Reason
		for _, r := range s.Results {
			uuids = append(uuids, r.UUID)
		}
	}
	if offline != wantOffline {
		return nil, fmt.Errorf("answered with offline %v, want %v", offline, wantOffline)
	}
	if !isPacket && offline && hybrid != strings.Contains(reason, offlineHybridNote) {
		return nil, fmt.Errorf("answered offline with reason %q: want hybrid %v", reason, hybrid)
	}
	return uuids, nil
}

// offlineHybridNote is what an offline search's reason says when its
// recall is hybrid (the journals embedded with the model).
const offlineHybridNote = "hybrid recall"

// recallEmbedder is the model of --recall-embedder, resolved as the
// command resolves --embedder: none is lexical only (nil).
func recallEmbedder(spec string) (memsync.Embedder, error) {
	switch spec {
	case "", "none":
		return nil, nil
	case "default":
		return embed.Default(), nil
	}
	m, err := embed.Load(spec)
	if err != nil {
		return nil, fmt.Errorf("--recall-embedder %s: %w", spec, err)
	}
	return m, nil
}

// recallModelNote says which model the figure ran with.
func recallModelNote(spec string, emb memsync.Embedder) string {
	if emb == nil {
		return "none (lexical recall only; every command has `--embedder none`)"
	}
	return fmt.Sprintf("%s (every command has `--embedder %s`; the projection, the diagnostics and offline embed with it, hybrid RRF in memsync/recall)", emb.Version(), spec)
}

// packetUUIDs is every memory uuid a packet returns, once each, in the
// order a reader meets them: core, hard constraints, procedures,
// pitfalls, relevant facts, open questions, then any selected id not met
// yet. Open questions from --question have no uuid and are skipped.
func packetUUIDs(p packet.Packet) []string {
	seen := map[string]bool{}
	var out []string
	add := func(u string) {
		if u != "" && !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	for _, items := range [][]packet.Item{p.Core, p.HardConstraints, p.ProceduresToFollow, p.PitfallsToAvoid, p.RelevantFacts, p.OpenQuestions} {
		for _, it := range items {
			add(it.UUID)
		}
	}
	for _, u := range p.SelectedMemoryIDs {
		add(u)
	}
	return out
}

// forEach calls fn(i) for every i in [0, n) on workers goroutines. At the
// first error it starts no more calls, waits for those running, and
// returns that error; else ctx's error, if any.
func forEach(ctx context.Context, workers, n int, fn func(i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	next := make(chan int)
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if ctx.Err() != nil {
					continue // an error or the caller stopped the run: drain
				}
				if err := fn(i); err != nil {
					once.Do(func() { first = err; cancel() })
				}
			}
		}()
	}
feed:
	for i := 0; i < n; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return first
	}
	return context.Cause(ctx)
}

func recallQuery(text string) memsync.SearchQuery {
	return memsync.SearchQuery{Text: text, Groups: journal.ReaderGroups(recallAgent), Limit: recallK}
}

func hitUUIDs(hits []memsync.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.UUID
	}
	return out
}

// recallTolerance is how far below its door's diagnostic the command's
// recall@10 and hit@10 may be (issue 24's "Done when").
const recallTolerance = 0.02

// recallTable is the markdown report of the recall benchmark, and the
// outcome of the target on every search row.
func recallTable(paths []*recallPath, convs, questions int, evidence string) (string, []check) {
	var sb strings.Builder
	var checks []check
	fmt.Fprintf(&sb, "\nRecall on LoCoMo (dev): %s, %d questions (adversarial left out); evidence entries: %s.\n",
		plural(convs, "conversation"), questions, evidence)
	fmt.Fprintf(&sb, "Clocks: \"day after\" is `--as-of` two days after the conversation's last turn; \"today\" is no `--as-of` (the present, %s). "+
		"Commands: the built binaries, default flags, `--repo` and the door's graph flags only. Offline: the command pointed at a Neo4j where none listens "+
		"(`--graph neo4j --neo4j-uri %s`), so it answers from the journals; every answer's \"offline\" is checked on every door. "+
		"Packet rows count every memory uuid the packet returns (all sections, in order: core, hard_constraints, procedures_to_follow, "+
		"pitfalls_to_avoid, relevant_facts, open_questions, then selected_memory_ids). Diagnostic rows are below the command (no importance, status or clock): "+
		"for comparison only.\n\n", time.Now().UTC().Format("2006-01-02"), offlineURI)
	cats := []int{1, 2, 3, 4}
	sb.WriteString("| door | path | clock | recall@5 | recall@10 | hit@10 | MRR@10 | session any@5 / @10 | Δ recall@10 / Δ hit@10 vs the diagnostic |")
	for _, c := range cats {
		fmt.Fprintf(&sb, " %s R@10 / hit@10 / MRR |", categoryNames[c])
	}
	sb.WriteString("\n|" + strings.Repeat("---|", 9+len(cats)) + "\n")
	f := func(v float64) string {
		if math.IsNaN(v) {
			return "–"
		}
		return fmt.Sprintf("%.3f", v)
	}
	for _, p := range paths {
		door := p.door
		if door == "" {
			door = "–"
		}
		if p.na != "" {
			fmt.Fprintf(&sb, "| %s | %s | %s | n/a (%s) |\n", door, p.name, p.clock, p.na)
			continue
		}
		s := p.scores
		r10, hit := s.mean(s.r10, 0), s.mean(s.hit10, 0)
		fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %s | %s | %s / %s | %s |", door, p.name, p.clock,
			f(s.mean(s.r5, 0)), f(r10), f(hit), f(s.mean(s.mrr, 0)), f(s.mean(s.s5, 0)), f(s.mean(s.s10, 0)), deltaCell(p, &checks))
		for _, c := range cats {
			fmt.Fprintf(&sb, " %s / %s / %s |", f(s.mean(s.r10, c)), f(s.mean(s.hit10, c)), f(s.mean(s.mrr, c)))
		}
		sb.WriteString("\n")
	}
	for _, p := range slices.Backward(paths) {
		if p.na != "" {
			continue
		}
		sb.WriteString("\nquestions per category:")
		for _, c := range cats {
			fmt.Fprintf(&sb, " %s %d", categoryNames[c], p.scores.n[c])
		}
		sb.WriteString("\n")
		break
	}
	return sb.String(), checks
}

// deltaCell is a search row's distance to its door's diagnostic, with the
// target's verdict (appended to checks); empty for the other rows.
func deltaCell(p *recallPath, checks *[]check) string {
	if p.diag == nil || p.diag.na != "" {
		return ""
	}
	s, d := p.scores, p.diag.scores
	dr := s.mean(s.r10, 0) - d.mean(d.r10, 0)
	dh := s.mean(s.hit10, 0) - d.mean(d.hit10, 0)
	met := dr >= -recallTolerance-1e-9 && dh >= -recallTolerance-1e-9
	*checks = append(*checks, check{figure: "search, " + p.clock, backend: p.door,
		value: fmt.Sprintf("Δ %+.3f / %+.3f", dr, dh), target: fmt.Sprintf("≥ -%.2f", recallTolerance), met: met})
	verdict := " ✅"
	if !met {
		verdict = " ❌"
	}
	return fmt.Sprintf("%+.3f / %+.3f%s", dr, dh, verdict)
}
