// Command bench measures memsync on this machine, on the embedded store and
// on Neo4j side by side, against a naive baseline (one transaction per
// record) and the storage engine's ceiling (plain inserts of the same rows),
// and prints one markdown table; --out also writes it, with the machine it
// ran on, into a markdown file (between markers, so notes around it stay).
//
//	go run ./cmd/bench --neo4j-uri bolt://127.0.0.1:7687   # full run: 25+ minutes on 2 cores
//	go run ./cmd/bench --quick --out /dev/null   # CI smoke run, under two minutes
//
// Every figure is the median of --runs runs. Progress goes to stderr. The
// Neo4j column needs --neo4j-uri or MEMSYNC_NEO4J_URI; the benchmark takes
// the test lock the Neo4j tests take while it uses the server and drops the
// graph before and after, so it can share the server with them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// figures are the measurements, in the order they run; --only picks some.
var figures = []string{"projection", "naive", "ceiling", "modelcost", "search", "latency", "idle", "rebuild", "append", "hook", "recall", "ui", "scale"}

// onDemand are the figures only --only runs: recall reads a data set from
// outside the repository; ui measures the web view (issue 29); scale the
// commands over many day files (issue 50).
var onDemand = map[string]bool{"recall": true, "ui": true, "scale": true}

// options are the benchmark's settings.
type options struct {
	quick          bool
	graphiti       bool // every command on Neo4j also writes the Graphiti shape (issue 57)
	runs           int
	rebuildRuns    int // runs of the rebuild figure (it is long)
	out            string
	neo4jURI       string
	seed           int64
	records        int // projection corpus
	naiveRecords   int
	modelPairs     int // pairs of the model-cost figure (issue 27)
	searchCorpus   int
	searchQueries  int
	rebuildRecords int
	agents         int // agents writing the corpora
	idleAgents     int
	idlePerAgent   int
	idleWait       time.Duration
	idleChurn      time.Duration // one shared record this often while the churn CPU is measured; 0: not measured
	latencyRate    int
	latencyDur     time.Duration
	latencyAgents  int
	// The scale figure's repository: agents × days day files of records each.
	scaleAgents, scaleDays, scaleRecords int
	appendCalls                          int
	appendEmbedder                       string // --append-embedder: the append figure is measured with it too, A/B in each run
	hookCalls                            int
	packetCommands                       int // `memsync packet` execs per run
	cpuProfile                           string
	recallData                           string       // the LoCoMo dev set
	recallConversations                  int          // 0: all
	recallEmbedder                       string       // the model the recall figure embeds with: none, default or a model's path
	recallRepos                          string       // where the recall figure's repositories are made and kept; "": the scratch directory
	recallSessions                       bool         // the recall figure's records carry LoCoMo's session ids
	recallOnly                           map[int]bool // --recall-only: the conversations' indices; nil: all
	only                                 map[string]bool
	uiPages                              map[string]bool // --ui-pages: the ui figure's pages; nil: all
	vectors                              int             // dimensions of the hashing test embedder the graphs embed with; 0: lexical only
	vectorsModel                         string          // the graphs' embedder: test (the hashing one, --vectors dims), none, default or a model's path
	args                                 []string        // the command line, for the report
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// Main runs the benchmark with args (without the program name) and returns
// the exit code: 0 when every figure was measured (whatever the times), 1
// when one failed, 2 on bad usage.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "semantic" { // issue 27's diagnostic (semantic.go)
		return semanticMain(ctx, args[1:], stdout, stderr)
	}
	opts, err := parseOptions(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 2
	}
	b := &bench{opts: opts, stderr: stderr, started: time.Now()}
	if err := b.run(ctx, stdout); err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	if b.failed {
		fmt.Fprintln(stderr, "bench: some figures could not be measured (see the table)")
		return 1
	}
	return 0
}

func parseOptions(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{args: args}
	var sizes, only string
	var latencySec, idleSec float64
	fs.BoolVar(&o.graphiti, "graphiti", false, "on Neo4j, every memsync command the figures run (the rebuild's among them) also writes the Graphiti shape (--graphiti)")
	fs.BoolVar(&o.quick, "quick", false, "small sizes and 1 run: a smoke test that finishes in under two minutes")
	fs.IntVar(&o.runs, "runs", 0, "runs per figure; the table shows the median (default 3, quick 1)")
	fs.IntVar(&o.rebuildRuns, "rebuild-runs", 0, "runs of the rebuild figure (default: --runs)")
	fs.StringVar(&o.out, "out", "", "also write the table, with the machine, into this markdown `file` (between bench markers)")
	fs.StringVar(&o.neo4jURI, "neo4j-uri", os.Getenv("MEMSYNC_NEO4J_URI"), "Neo4j Bolt `URI` (default $MEMSYNC_NEO4J_URI); none: the Neo4j column is n/a")
	fs.Int64Var(&o.seed, "seed", 42, "corpus seed")
	fs.IntVar(&o.records, "records", 0, "records projected per projection run (default 100000, quick 10000)")
	fs.IntVar(&o.naiveRecords, "naive-records", 0, "records of the naive baseline (default 2000, quick 100)")
	fs.IntVar(&o.modelPairs, "model-pairs", 0, "pairs of the modelcost figure: the projection lexical-only and with the built-in model, back to back, in this run (default 9, quick 1)")
	fs.IntVar(&o.searchCorpus, "search-corpus", 0, "memories in the searched graph (default 100000, quick 5000)")
	fs.IntVar(&o.searchQueries, "search-queries", 200, "queries per search run")
	fs.IntVar(&o.rebuildRecords, "rebuild-records", 0, "records of the rebuild figure (default 1000000, quick 10000)")
	fs.IntVar(&o.agents, "agents", 40, "agents writing the corpora")
	fs.IntVar(&o.idleAgents, "idle-agents", 0, "agents of the idle daemon (default 100, quick 20)")
	fs.IntVar(&o.idlePerAgent, "idle-records", 0, "records per agent of the idle daemon (default 50; 5 with --idle-churn)")
	fs.Float64Var(&idleSec, "idle-seconds", 0, "how long the daemon idles before its RSS is read (default 5, quick 2; 60 with --idle-churn), and how long the churn CPU is measured")
	fs.DurationVar(&o.idleChurn, "idle-churn", 0, "also measure the idle daemon's CPU while `memsync append --scope shared` writes one record every `interval` (e.g. 10s), over --idle-seconds (issue 30); 0: not measured")
	fs.IntVar(&o.latencyRate, "latency-rate", 500, "append rate of the latency figure, records/s")
	fs.Float64Var(&latencySec, "latency-seconds", 0, "how long the appenders run (default 10, quick 3)")
	fs.IntVar(&o.latencyAgents, "latency-agents", 10, "agents the appenders write as")
	fs.IntVar(&o.scaleAgents, "scale-agents", 1000, "the scale figure's agents")
	fs.IntVar(&o.scaleDays, "scale-days", 100, "the scale figure's day files per agent")
	fs.IntVar(&o.scaleRecords, "scale-records", 1, "the scale figure's records per day file")
	fs.IntVar(&o.appendCalls, "append-calls", 0, "memsync append execs (default 200, quick 100)")
	fs.StringVar(&o.appendEmbedder, "append-embedder", "", "also measure `memsync append` with the surprise gate comparing vectors (`--embedder` none, default or a model's path), each run right after the words-only one (issue 27); \"\": words only")
	fs.IntVar(&o.hookCalls, "hook-calls", 0, "memsync hook SessionStart execs, at --search-corpus memories (default 100, quick 20)")
	fs.IntVar(&o.packetCommands, "packet-commands", 0, "memsync packet execs per run of the search figure (default 60, quick 20)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "profile the projection (rebuild path): the last run's CPU into `prefix`-<backend>.pprof; then one more run, not counted, sampling memsync's goroutines into prefix-<backend>.wall.txt and the Neo4j server's transactions into prefix-neo4j.server.txt")
	fs.StringVar(&o.recallData, "recall-data", defaultRecallData, "the LoCoMo development set (JSON) the recall figure reads")
	fs.StringVar(&o.recallEmbedder, "recall-embedder", "none", "the recall figure's `model`: none (lexical only), default (the built-in model) or a model's path; the projection into each backend, the diagnostics and every command (--embedder) use it")
	fs.StringVar(&o.recallRepos, "recall-repos", "", "make the recall figure's repositories (one per conversation, with its embedded store) under `dir` and keep them; default: the run's scratch directory, removed")
	fs.BoolVar(&o.recallSessions, "recall-sessions", true, "the recall figure's records carry each LoCoMo session as their `session` field (as a host's hook writes it); false: no session field, as imports, direct writers and MCP hosts that pass none write them")
	fs.IntVar(&o.recallConversations, "recall-conversations", 0, "conversations of the recall figure (0: all; CI's smoke run uses 1)")
	fs.Func("recall-only", "conversations of the recall figure by index, 0-based, comma-separated (a cross-validation fold: \"2\" holds conversation 2 out)", func(v string) error {
		o.recallOnly = map[int]bool{}
		for _, f := range strings.Split(v, ",") {
			i, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || i < 0 {
				return fmt.Errorf("--recall-only %q: want indices like 0,2,4", v)
			}
			o.recallOnly[i] = true
		}
		return nil
	})
	fs.StringVar(&sizes, "sizes", "", "sizes in one flag: `key=n,...` with keys records, naive, search, rebuild, agents, idle")
	fs.IntVar(&o.vectors, "vectors", 0, "embed every memory and search hybrid with the hashing test embedder (memsynctest) of `N` dimensions: the cost of vectors at the real model's size, not its quality; 0: lexical only")
	fs.StringVar(&o.vectorsModel, "vectors-model", "test", "the `model` the graphs embed with: test (the hashing test embedder of --vectors dimensions), none, default (the built-in model) or a model's path")
	fs.Func("ui-pages", "the ui figure's pages only (comma-separated names from its table: fleet,agent,search,memory,graph,packet,timeline,queue,entities...)", func(v string) error {
		o.uiPages = map[string]bool{}
		for _, p := range strings.Split(v, ",") {
			o.uiPages[strings.TrimSpace(p)] = true
		}
		return nil
	})
	fs.StringVar(&only, "only", "", "run only these figures (comma-separated): "+strings.Join(figures, ","))
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: go run ./cmd/bench [--quick] [--runs N] [--out FILE] [--neo4j-uri URI] [sizes]\n\n"+
			"Measures memsync's projection (against a naive baseline and the engine's ceiling), latency,\n"+
			"search, rebuild and memory on the embedded store and on Neo4j, and prints one markdown table.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	def := func(v *int, full, quick int) {
		if *v == 0 {
			*v = full
			if o.quick {
				*v = quick
			}
		}
	}
	if sizes != "" {
		for _, kv := range strings.Split(sizes, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
			n, err := strconv.Atoi(strings.ReplaceAll(v, "_", ""))
			if !ok || err != nil || n <= 0 {
				return nil, fmt.Errorf("--sizes: %q is not key=positive number", kv)
			}
			dst := map[string]*int{"records": &o.records, "naive": &o.naiveRecords, "search": &o.searchCorpus,
				"rebuild": &o.rebuildRecords, "agents": &o.agents, "idle": &o.idleAgents}[k]
			if dst == nil {
				return nil, fmt.Errorf("--sizes: unknown key %q", k)
			}
			*dst = n
		}
	}
	def(&o.runs, 3, 1)
	def(&o.rebuildRuns, o.runs, o.runs)
	def(&o.records, 100_000, 10_000)
	def(&o.naiveRecords, 2_000, 100)
	def(&o.modelPairs, 9, 1)
	def(&o.searchCorpus, 100_000, 5_000)
	def(&o.rebuildRecords, 1_000_000, 10_000)
	def(&o.idleAgents, 100, 20)
	def(&o.appendCalls, 200, 100)
	def(&o.hookCalls, 100, 20)
	def(&o.packetCommands, 60, 20)
	if latencySec == 0 {
		latencySec = map[bool]float64{false: 10, true: 3}[o.quick]
	}
	if idleSec == 0 {
		idleSec = map[bool]float64{false: 5, true: 2}[o.quick]
		if o.idleChurn > 0 {
			idleSec = 60
		}
	}
	if o.idlePerAgent == 0 {
		o.idlePerAgent = 50
		if o.idleChurn > 0 {
			o.idlePerAgent = 5
		}
	}
	o.latencyDur = time.Duration(latencySec * float64(time.Second))
	o.idleWait = time.Duration(idleSec * float64(time.Second))
	o.naiveRecords = min(o.naiveRecords, o.records)
	for name, v := range map[string]int{"--runs": o.runs, "--rebuild-runs": o.rebuildRuns, "--records": o.records, "--search-corpus": o.searchCorpus,
		"--search-queries": o.searchQueries, "--rebuild-records": o.rebuildRecords, "--agents": o.agents,
		"--idle-agents": o.idleAgents, "--idle-records": o.idlePerAgent, "--latency-rate": o.latencyRate,
		"--latency-agents": o.latencyAgents, "--append-calls": o.appendCalls, "--naive-records": o.naiveRecords, "--model-pairs": o.modelPairs, "--hook-calls": o.hookCalls,
		"--packet-commands": o.packetCommands} {
		if v <= 0 {
			return nil, fmt.Errorf("%s must be positive", name)
		}
	}
	if o.recallConversations < 0 {
		return nil, fmt.Errorf("--recall-conversations must not be negative")
	}
	if o.idleChurn < 0 {
		return nil, fmt.Errorf("--idle-churn must not be negative")
	}
	if o.latencyDur <= 0 || o.idleWait < 0 {
		return nil, fmt.Errorf("--latency-seconds must be positive and --idle-seconds not negative")
	}
	o.only = map[string]bool{}
	if only == "" {
		for _, f := range figures {
			o.only[f] = !onDemand[f]
		}
	} else {
		for _, f := range strings.Split(only, ",") {
			f = strings.TrimSpace(f)
			i := sort.SearchStrings(sortedFigures(), f)
			if i == len(figures) || sortedFigures()[i] != f {
				return nil, fmt.Errorf("--only: unknown figure %q (have %s)", f, strings.Join(figures, ","))
			}
			o.only[f] = true
		}
	}
	return o, nil
}

func sortedFigures() []string {
	s := append([]string(nil), figures...)
	sort.Strings(s)
	return s
}
