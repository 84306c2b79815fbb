package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/memsynctest"
)

// bench is one benchmark run.
type bench struct {
	opts    *options
	stderr  io.Writer
	started time.Time
	tmp     string
	bin     string // the built memsync command
	failed  bool

	machine  machine
	loadEnd  string
	neoURI   string
	neoVer   string
	columns  []*column
	appendMS series // memsync append p50 per run (no graph involved)
	// memsync append p50 per run with --append-embedder, measured right
	// after appendMS's run (issue 27).
	appendVecMS series
	// memsync hook claude-code SessionStart p50 and p95 per run (no graph involved)
	hookP50, hookP95 series

	projRepo    string // journals of the projection corpus
	projMems    []memsync.Memory
	rebuildRepo string // journals of the rebuild corpus
}

// column is one backend's results.
type column struct {
	b  *backend
	na string // the whole backend is not measured: why

	rebuildPath, apply, naive, ceiling series // records/s
	// keyedCeiling (a diagnostic): the ceiling's rows with the keys every
	// projection needs. Embedded: into the memories table of a real store,
	// with its key and indexes. Neo4j: under what SPEC §4 asks of a memory
	// (neo4jKeyedCeiling).
	keyedCeiling series
	// ceiling4k (embedded only, a diagnostic): the ceiling at SQLite's
	// default 4 KiB pages, as rounds before the store's 16 KiB measured it.
	ceiling4k                         series
	model                             modelCost // issue 27: the built-in model against lexical-only, same run (embedded)
	latP50, latP99, latMax, latRate   series    // ms, ms, ms, records/s
	searchP50, searchP95              series    // ms
	rankP50, rankP95                  series    // ms: search through read.Rank
	packetP50, packetP95              series    // ms: packet.BuildPacket in process
	packetCmdP50, packetCmdP95        series    // ms: `memsync packet --json`, the built binary
	searchCmdP50, searchCmdP95        series    // ms: `memsync search --json`, the built binary
	processStart                      series    // ms: `memsync packet --help`, p50
	importanceSec                     series    // s to score every memory after the rebuild
	searchHits                        int
	rebuildWall, rebuildPhase, peakMB series              // s, s, MB
	rebuildPeak, verifyPeak           series              // MB sampled in each phase of the rebuild command
	idleMB, idleHWM, idleCatchUp      series              // MB, MB, s
	idleSettled                       series              // s
	idleCPU                           series              // % of one core while idle
	idleChurnCPU                      series              // % of one core with one shared record per --idle-churn
	cpu                               map[string][]string // figure -> per run: wall and CPU split
	serverPID                         int                 // the Neo4j server's process, 0 if unknown
}

// meter measures a run's wall time and the CPU time memsync (this
// process) and the Neo4j server spent in it.
type meter struct {
	pid          int
	start        time.Time
	self, server time.Duration
}

// startMeter starts measuring a run on c. The Neo4j server is looked up
// again each time: other processes' tests may restart it, which the log
// then says.
func (b *bench) startMeter(c *column) meter {
	if c.b.neo != nil {
		if pid := serverPID(b.neoURI); pid != c.serverPID {
			b.logf("note: the Neo4j server's process changed (%d → %d): it was restarted, and its JIT is cold again", c.serverPID, pid)
			c.serverPID = pid
		}
	}
	return meter{pid: c.serverPID, start: time.Now(), self: selfCPU(), server: procCPU(c.serverPID)}
}

func (m meter) String() string {
	s := fmt.Sprintf("wall %s s, memsync %s CPU-s", seconds(time.Since(m.start).Seconds()), seconds((selfCPU() - m.self).Seconds()))
	if m.pid > 0 {
		s += fmt.Sprintf(", Neo4j server %s CPU-s", seconds((procCPU(m.pid) - m.server).Seconds()))
	}
	return s
}

// noteCPU keeps a run's split for the report.
func (c *column) noteCPU(figure string, m meter) string {
	split := m.String()
	if c.cpu == nil {
		c.cpu = map[string][]string{}
	}
	c.cpu[figure] = append(c.cpu[figure], split)
	return split
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.stderr, "[%6.1fs] %s\n", time.Since(b.started).Seconds(), fmt.Sprintf(format, args...))
}

func (b *bench) run(ctx context.Context, stdout io.Writer) error {
	o := b.opts
	b.machine = describeMachine(time.Now())
	var err error
	b.tmp, err = os.MkdirTemp("", "memsync-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(b.tmp)
	b.logf("scratch directory %s; %s per figure", b.tmp, plural(o.runs, "run"))

	var vectors memsync.Embedder
	switch {
	case o.vectorsModel != "" && o.vectorsModel != "test":
		// A real model (issue 27's costs with the embedder itself).
		if vectors, err = recallEmbedder(o.vectorsModel); err != nil {
			return fmt.Errorf("--vectors-model: %w", err)
		}
		if vectors != nil {
			b.logf("vectors: every memory embedded by %s", vectors.Version())
		}
	case o.vectors > 0:
		vectors = memsynctest.NewEmbedder(o.vectors)
		b.logf("vectors: every memory embedded by %s", vectors.Version())
	}
	emb := &column{b: &backend{name: "embedded", graphFlag: "embedded", tmp: b.tmp, logf: b.logf, emb: vectors, cliModel: b.cliEmbedder()}}
	neo := &column{b: &backend{name: "Neo4j", graphFlag: "neo4j", tmp: b.tmp, logf: b.logf, emb: vectors, cliModel: b.cliEmbedder(), graphiti: o.graphiti}}
	b.columns = []*column{emb, neo}
	switch {
	case o.neo4jURI == "":
		neo.na = "no server: pass --neo4j-uri or set MEMSYNC_NEO4J_URI"
	case o.neo4jURI == "none":
		neo.na = "not measured (--neo4j-uri none)"
	default:
		b.neoURI = o.neo4jURI
		srv, err := openNeo4j(ctx, o.neo4jURI, vectors, b.logf)
		if err != nil {
			if !o.quick {
				return fmt.Errorf("neo4j at %s: %w", o.neo4jURI, err)
			}
			neo.na = "server not reachable"
			b.logf("Neo4j at %s is not reachable (%v): its column is n/a", o.neo4jURI, err)
		} else {
			defer srv.close()
			neo.b.neo, b.neoVer = srv, srv.version
			neo.serverPID = serverPID(o.neo4jURI)
			b.logf("Neo4j: %s at %s", srv.version, o.neo4jURI)
		}
	}

	if o.only["append"] || o.only["idle"] || o.only["rebuild"] || o.only["hook"] || o.only["scale"] {
		if err := b.build(ctx); err != nil {
			return err
		}
	}
	for _, c := range b.columns {
		if c.na != "" {
			continue
		}
		if err := b.measure(ctx, c); err != nil {
			return err
		}
	}
	if o.only["append"] {
		b.logf("memsync append: %d execs per run", o.appendCalls)
		for run := 0; run < o.runs && b.appendMS.err == nil; run++ {
			ms, err := appendWall(ctx, b.bin, b.tmp, o.appendCalls, o.seed+int64(run))
			if err != nil {
				b.appendMS.err = err
				break
			}
			b.appendMS.add(percentile(ms, 50))
			b.logf("memsync append run %d: p50 %s ms, p99 %s ms", run+1, millis(percentile(ms, 50)), millis(percentile(ms, 99)))
			if o.appendEmbedder != "" {
				ms, err := appendWall(ctx, b.bin, b.tmp, o.appendCalls, o.seed+int64(run), "--embedder", o.appendEmbedder)
				if err != nil {
					b.appendMS.err = fmt.Errorf("--append-embedder %s: %w", o.appendEmbedder, err)
					break
				}
				b.appendVecMS.add(percentile(ms, 50))
				b.logf("memsync append --embedder %s run %d: p50 %s ms, p99 %s ms", o.appendEmbedder, run+1, millis(percentile(ms, 50)), millis(percentile(ms, 99)))
			}
		}
		b.noteFailure(&b.appendMS, nil)
	} else {
		b.appendMS.na = "not run"
	}
	if o.only["hook"] {
		b.measureHook(ctx)
	} else {
		b.hookP50.na, b.hookP95.na = "not run", "not run"
	}
	if o.only["recall"] {
		if err := b.measureRecall(ctx, stdout); err != nil {
			return err
		}
		if len(o.only) == 1 {
			return ctx.Err()
		}
	}
	if o.only["ui"] {
		if err := b.measureUI(ctx, stdout); err != nil {
			return err
		}
		if len(o.only) == 1 {
			return ctx.Err()
		}
	}
	if o.only["scale"] {
		if err := b.measureScale(ctx, stdout); err != nil {
			return err
		}
		if len(o.only) == 1 {
			return ctx.Err()
		}
	}
	b.loadEnd = loadAverage()
	table, checks := b.table()
	fmt.Fprint(stdout, table)
	if o.quick {
		b.logf("targets: not judged on a --quick smoke run (its sizes are not the targets')")
	} else {
		b.logf("targets: %s", summary(checks))
	}
	if o.out != "" {
		if err := writeReport(o.out, b.report(table, checks)); err != nil {
			return fmt.Errorf("write %s: %w", o.out, err)
		}
		b.logf("wrote %s", o.out)
	}
	return ctx.Err()
}

// build compiles the two binaries into the scratch directory, as they are
// installed: memsync (cmd/memsync: runs append itself, execs the
// core for everything else) and memsync-core beside it (cmd/memsync-core).
// b.bin is the front; every command the harness runs goes through it.
func (b *bench) build(ctx context.Context) error {
	b.bin = filepath.Join(b.tmp, "memsync")
	b.logf("building memsync and memsync-core")
	for _, p := range []struct{ out, pkg string }{
		{b.bin, "github.com/memsync/memsync/cmd/memsync"},
		{filepath.Join(b.tmp, "memsync-core"), "github.com/memsync/memsync/cmd/memsync-core"},
	} {
		cmd := exec.CommandContext(ctx, "go", "build", "-o", p.out, p.pkg)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v: %s", p.pkg, err, out)
		}
	}
	return nil
}

// noteFailure records that s failed; in quick mode an unreachable Neo4j
// makes the figure n/a instead.
func (b *bench) noteFailure(s *series, c *column) {
	if s.err == nil {
		return
	}
	if b.opts.quick && c != nil && c.b.neo != nil && errors.Is(s.err, memsync.ErrUnavailable) {
		s.na, s.err = "server not reachable", nil
		return
	}
	b.failed = true
	b.logf("FAILED: %v", s.err)
}

// each runs fn runs times as the only user of the backend's server,
// stopping at the first error, which it stores in every series given.
func (b *bench) each(ctx context.Context, c *column, what string, fn func(run int) error, into ...*series) {
	b.eachN(ctx, c, b.opts.runs, what, fn, into...)
}

// eachN is each with runs runs.
func (b *bench) eachN(ctx context.Context, c *column, runs int, what string, fn func(run int) error, into ...*series) {
	for run := 0; run < runs; run++ {
		err := c.b.exclusive(ctx, func() error { return fn(run) })
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			err = fmt.Errorf("%s: %w", what, err)
			for _, s := range into {
				s.err = err
				b.noteFailure(s, c)
			}
			return
		}
	}
}

// measure runs every figure asked for on one backend.
func (b *bench) measure(ctx context.Context, c *column) error {
	o := b.opts
	if o.only["projection"] || o.only["naive"] || o.only["ceiling"] || o.only["modelcost"] {
		if err := b.warmUp(ctx, c); err != nil || c.na != "" {
			return err
		}
	}
	for _, f := range []struct {
		figure  string
		measure func(context.Context, *column) error
		series  []*series // marked "not run" when the figure is not asked for
	}{
		{"projection", b.measureProjection, []*series{&c.rebuildPath, &c.apply}},
		{"naive", b.measureNaive, []*series{&c.naive}},
		{"ceiling", b.measureCeiling, []*series{&c.ceiling, &c.keyedCeiling, &c.ceiling4k}},
		{"modelcost", b.measureModelCost, []*series{&c.model.lexical, &c.model.model, &c.model.change}},
		{"search", b.measureSearch, []*series{&c.searchP50, &c.searchP95, &c.rankP50, &c.rankP95, &c.packetP50, &c.packetP95, &c.packetCmdP50, &c.packetCmdP95, &c.processStart, &c.searchCmdP50, &c.searchCmdP95}},
		{"latency", b.measureLatency, []*series{&c.latP50, &c.latP99}},
		{"idle", b.measureIdle, []*series{&c.idleMB}},
		{"rebuild", b.measureRebuild, []*series{&c.rebuildWall, &c.peakMB, &c.importanceSec}},
	} {
		if !o.only[f.figure] {
			for _, s := range f.series {
				s.na = "not run"
			}
			continue
		}
		if err := f.measure(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// mb converts KiB to MB (10^6 bytes).
func mb(kib int64) float64 { return float64(kib) * 1024 / 1e6 }

// projectionCorpus writes the projection corpus's journals and keeps its
// records in memory (once for every backend).
func (b *bench) projectionCorpus() error {
	if b.projRepo != "" {
		return nil
	}
	o := b.opts
	b.projRepo = filepath.Join(b.tmp, "projection-repo")
	b.logf("projection corpus: %s records from %d agents (seed %d)", thousands(float64(o.records)), o.agents, o.seed)
	if err := writeJournals(b.projRepo, newGenerator(o.seed, o.agents, true), o.records); err != nil {
		return err
	}
	b.projMems = newGenerator(o.seed, o.agents, true).take(o.records)
	return nil
}

// startCPUProfile starts a CPU profile into path and returns what stops it.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// startWallProfiles samples memsync's goroutines into prefix.wall.txt and,
// on Neo4j, the server's transactions into prefix.server.txt, until the
// returned function is called.
func startWallProfiles(ctx context.Context, prefix string, neo *neo4jServer) func() {
	wall := startWallProfile(10 * time.Millisecond)
	var server *serverProfiler
	if neo != nil {
		server = startServerProfile(ctx, neo, 50*time.Millisecond)
	}
	return func() {
		var out strings.Builder
		wall.finish(&out, 40, "a goroutine at (innermost memsync frame ← its caller)")
		os.WriteFile(prefix+".wall.txt", []byte(out.String()), 0o644)
		if server != nil {
			out.Reset()
			server.finish(&out, 20, "a transaction running")
			os.WriteFile(prefix+".server.txt", []byte(out.String()), 0o644)
		}
	}
}

// summary is one line about the targets: "9 of 12 met; missed: ...".
func summary(checks []check) string {
	met := 0
	var missed []string
	for _, c := range checks {
		if c.met {
			met++
		} else {
			missed = append(missed, fmt.Sprintf("%s on %s (%s, target %s)", c.figure, c.backend, c.value, c.target))
		}
	}
	s := fmt.Sprintf("%d of %d met", met, len(checks))
	if len(missed) > 0 {
		s += "; missed: " + strings.Join(missed, "; ")
	}
	return s
}
