package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/journal"
)

// Targets, per backend column (embedded, Neo4j); nil: none.
var (
	targetProjection = [2]*target{atLeast(50_000, "≥ 50,000"), atLeast(20_000, "≥ 20,000")}
	// Issue 30: both backends ≥ 50× the naive baseline; the embedded
	// store ≥ 70 % of its engine's ceiling, Neo4j ≥ 50 % of its UNWIND one.
	targetNaive      = [2]*target{atLeast(50, "≥ 50×"), atLeast(50, "≥ 50×")}
	targetCeiling    = [2]*target{atLeast(0.70, "≥ 70%"), atLeast(0.50, "≥ 50%")}
	targetLatencyP99 = [2]*target{atMost(250, "p99 ≤ 250 ms"), atMost(250, "p99 ≤ 250 ms")}
	targetAppend     = atMost(5, "≤ 5 ms")
	targetSearchP95  = [2]*target{below(25, "p95 < 25 ms"), below(50, "p95 < 50 ms")}
	targetPacketP95  = [2]*target{atMost(50, "p95 ≤ 50 ms"), atMost(50, "p95 ≤ 50 ms")}
	// Issue 30: the whole `memsync rebuild` of 1M records (its verify pass included).
	targetRebuild  = [2]*target{atMost(20, "≤ 20 s"), atMost(60, "≤ 60 s")}
	targetPeakRSS  = [2]*target{atMost(300, "≤ 300 MB"), atMost(300, "≤ 300 MB")}
	targetIdleRSS  = [2]*target{atMost(40, "≤ 40 MB"), atMost(40, "≤ 40 MB")}
	targetIdleCPU  = atMost(2, "≤ 2 % of a core")  // issue 30: a fleet daemon with nothing to do
	targetChurnCPU = below(10, "< 10 % of a core") // issue 30: one shared record every --idle-churn
)

// table renders the results table and lists every target's outcome.
func (b *bench) table() (string, []check) {
	o := b.opts
	var checks []check
	// cell renders a series with its target and remembers the outcome.
	cell := func(figure string, c *column, s series, format func(float64) string, t *target) string {
		if c.na != "" {
			return "n/a (" + c.na + ")"
		}
		if o.quick {
			t = nil // smoke-run sizes: the targets are for the full sizes, not judged
		}
		if t != nil && s.ok() {
			checks = append(checks, check{figure: figure, backend: c.b.name, value: format(s.median()), target: t.label, met: t.met(s.median())})
		}
		return cellFor(s, format, t)
	}
	// pair renders two series as "a / b" with the second one's target.
	pair := func(figure string, c *column, a, s series, format func(float64) string, t *target) string {
		if c.na != "" {
			return "n/a (" + c.na + ")"
		}
		if !a.ok() {
			return cellFor(a, format, nil)
		}
		return format(a.median()) + " / " + cell(figure, c, s, format, t)
	}
	ratios := func(i int, c *column) string {
		if c.na != "" {
			return "n/a (" + c.na + ")"
		}
		var parts []string
		for _, r := range []struct {
			name   string
			den    series
			format func(float64) string
			t      *target
		}{{"naive", c.naive, ratio, targetNaive[i]}, {"ceiling", c.ceiling, percent, targetCeiling[i]}, {"keyed ceiling", c.keyedCeiling, percent, nil}} {
			if r.name == "keyed ceiling" && !r.den.ok() {
				continue // the ceiling not run
			}
			if !c.rebuildPath.ok() || !r.den.ok() {
				parts = append(parts, "n/a")
				continue
			}
			v := series{runs: []float64{c.rebuildPath.median() / r.den.median()}}
			parts = append(parts, cell("memsync / "+r.name, c, v, r.format, r.t))
		}
		return strings.Join(parts, " · ")
	}
	mbFormat := func(v float64) string { return thousands(v) + " MB" }
	rows := []tableRow{
		{figure: fmt.Sprintf("projection throughput, records/s — rebuild path: memsync.Engine.Rebuild of %s records in %d agents' journals, batches of %d (the embedded store's bulk load takes %d at once, as `memsync rebuild` does)",
			thousands(float64(o.records)), o.agents, engineBatch, engineBatch*(*embedded.Graph)(nil).BulkBatchFactor())},
		{figure: fmt.Sprintf("projection, Graph.Apply only (the same records already in memory, batches of %d), records/s", engineBatch)},
		{figure: fmt.Sprintf("naive baseline: one transaction per record (Graph.Apply with batches of 1, first %s records), records/s", thousands(float64(o.naiveRecords)))},
		{figure: fmt.Sprintf("engine ceiling: the same %s rows into an empty store, no constraints, %d rows per transaction (embedded: prepared INSERT into a bare SQLite table, with the store's page size, %d KiB; Neo4j: `UNWIND $rows AS r CREATE (m:%s) SET m = r`), records/s",
			thousands(float64(o.records)), engineBatch, embedded.PageSize/1024, ceilingLabel)},
		{figure: "memsync / naive · memsync / ceiling (rebuild path) · memsync / the ceiling with memsync's keys (a diagnostic)"},
		{figure: fmt.Sprintf("append → visible latency p50 / p99 at a steady %d records/s for %s s (%d agents appending, fsync on; memsync.Engine.Run with the daemon's defaults), ms",
			o.latencyRate, strings.TrimSuffix(seconds(o.latencyDur.Seconds()), ".0"), o.latencyAgents)},
		{figure: fmt.Sprintf("`memsync append` wall time per call p50 (%d execs of the built binary, fsync on, surprise gate on over %d recent records), ms", o.appendCalls, gateRecent)},
		{figure: fmt.Sprintf("search p50 / p95 at %s memories (Graph.Search, %d queries of 1–3 corpus words, groups CONSTELLATION + AGENT:<agent>), ms",
			thousands(float64(o.searchCorpus)), o.searchQueries)},
		{figure: fmt.Sprintf("search p50 / p95 with ranking at %s memories (read.Rank: the same queries, the best max(100, limit) lexical candidates, their signals, score.Evaluate, the blend; as of the newest record), ms",
			thousands(float64(o.searchCorpus)))},
		{figure: fmt.Sprintf("working-memory packet p50 / p95 at %s memories (packet.BuildPacket in process: one lexical pool, the lists, signals, score.Evaluate, routing; the same queries as goals, the four roles in turn, a task each), ms",
			thousands(float64(o.searchCorpus)))},
		{figure: fmt.Sprintf("`memsync packet --json` through the built binary p50 / p95 at %s memories (%d execs) · process start alone (`memsync packet --help`) p50 · p95 less the start (issue 17's target), ms",
			thousands(float64(o.searchCorpus)), o.packetCommands)},
		{figure: fmt.Sprintf("importance of all %s memories after the rebuild (Walk, Graph.Incoming per 1,000, score.Evaluate: what a full re-rank costs; the rebuild itself computes no importance), s",
			thousands(float64(o.rebuildRecords)))},
		{figure: fmt.Sprintf("rebuild of %s records: `memsync rebuild --yes` wall s (the rebuild itself, then its verify pass) · peak RSS (sampled peak while rebuilding / verifying)%s",
			thousands(float64(o.rebuildRecords)), runsNote(o.rebuildRuns, o.runs))},
		{figure: fmt.Sprintf("daemon idle RSS with %d agents (`memsync run`, caught up and settled, then idle %s s; VmRSS) · CPU while idle, %% of one core",
			o.idleAgents, strings.TrimSuffix(seconds(o.idleWait.Seconds()), ".0"))},
		{figure: fmt.Sprintf("`memsync hook claude-code SessionStart` wall time per call p50 / p95 at %s memories (%d execs of the built binary, process start included), ms",
			thousands(float64(o.searchCorpus)), o.hookCalls)},
		{figure: fmt.Sprintf("daemon CPU with %d agents × %d records, one shared record every %s (`memsync append --scope shared`), over %s s after the idle figure, %% of one core (issue 30; `--idle-churn`)",
			o.idleAgents, o.idlePerAgent, o.idleChurn, strings.TrimSuffix(seconds(o.idleWait.Seconds()), ".0"))},
		{figure: fmt.Sprintf("projection with the built-in model against lexical-only, same run (issue 27): the rebuild path of %s records into a fresh store, %s back to back, the order swapped every other pair; medians, records/s · change, median of the pairs",
			thousands(float64(o.records)), plural(o.modelPairs, "pair"))},
	}
	for i, c := range b.columns {
		rows[0].cells = append(rows[0].cells, cell("projection throughput", c, c.rebuildPath, thousands, targetProjection[i]))
		rows[1].cells = append(rows[1].cells, cell("projection (Apply)", c, c.apply, thousands, nil))
		rows[2].cells = append(rows[2].cells, cell("naive baseline", c, c.naive, thousands, nil))
		ceiling := cell("engine ceiling", c, c.ceiling, thousands, nil)
		if c.na == "" && c.ceiling.ok() && c.keyedCeiling.ok() {
			what := "with memsync's uuid key and list indexes, into a real store's memories table"
			if c.b.neo != nil {
				what = "with what SPEC §4 asks of a memory: the uuid constraint, WROTE and MENTIONS edges, the (group_id, ts) index and the fulltext index, in plain statements on labels of the bench's own"
			}
			ceiling += fmt.Sprintf(" (%s: %s)", what, thousands(c.keyedCeiling.median()))
		}
		if c.na == "" && c.ceiling.ok() && c.ceiling4k.ok() {
			ceiling += fmt.Sprintf(" (at SQLite's default 4 KiB pages, the ceiling of the rounds before: %s)", thousands(c.ceiling4k.median()))
		}
		rows[3].cells = append(rows[3].cells, ceiling)
		rows[4].cells = append(rows[4].cells, ratios(i, c))
		rows[5].cells = append(rows[5].cells, pair("append → visible p99", c, c.latP50, c.latP99, millis, targetLatencyP99[i]))
		switch {
		case i == 0:
			rows[6].cells = append(rows[6].cells, cell("memsync append p50", c, b.appendMS, millis, targetAppend))
		case b.appendMS.ok():
			rows[6].cells = append(rows[6].cells, "same command (append does not touch the graph)")
		default:
			rows[6].cells = append(rows[6].cells, "")
		}
		rows[7].cells = append(rows[7].cells, pair("search p95", c, c.searchP50, c.searchP95, millis, targetSearchP95[i]))
		rebuild := cell("rebuild wall time", c, c.rebuildWall, func(v float64) string { return seconds(v) + " s" }, targetRebuild[i])
		if c.na == "" && c.rebuildWall.ok() && c.rebuildPhase.ok() {
			rebuild = strings.Replace(rebuild, " s", fmt.Sprintf(" s (%s s + verify)", seconds(c.rebuildPhase.median())), 1)
		}
		if c.na == "" {
			rebuild += " · " + cell("rebuild peak RSS", c, c.peakMB, mbFormat, targetPeakRSS[i])
			if c.peakMB.ok() && c.rebuildPeak.ok() && c.verifyPeak.ok() {
				rebuild += fmt.Sprintf(" (%s / %s)", mbFormat(c.rebuildPeak.median()), mbFormat(c.verifyPeak.median()))
			}
		}
		rows[8].cells = append(rows[8].cells, pair("ranked search p95", c, c.rankP50, c.rankP95, millis, nil))
		rows[9].cells = append(rows[9].cells, pair("packet p95", c, c.packetP50, c.packetP95, millis, targetPacketP95[i]))
		packetCmd := pair("packet command p95", c, c.packetCmdP50, c.packetCmdP95, millis, nil)
		if c.na == "" && c.processStart.ok() {
			packetCmd += " · start " + millis(c.processStart.median())
			if c.packetCmdP95.ok() {
				less := series{runs: []float64{c.packetCmdP95.median() - c.processStart.median()}}
				packetCmd += " · " + cell("packet command p95 less process start", c, less, millis, targetPacketP95[i])
			}
		}
		rows[10].cells = append(rows[10].cells, packetCmd)
		rows[11].cells = append(rows[11].cells, cell("importance of every memory", c, c.importanceSec, func(v float64) string { return seconds(v) + " s" }, nil))
		rows[12].cells = append(rows[12].cells, rebuild)
		idle := cell("daemon idle RSS", c, c.idleMB, mbFormat, targetIdleRSS[i])
		if c.na == "" && c.idleMB.ok() && c.idleHWM.ok() {
			idle += " (peak VmHWM " + mbFormat(c.idleHWM.median()) + ")"
		}
		if c.na == "" && c.idleCPU.ok() {
			idle += " · CPU " + cell("daemon idle CPU", c, c.idleCPU, func(v float64) string { return fmt.Sprintf("%.2f %%", v) }, targetIdleCPU)
		}
		rows[13].cells = append(rows[13].cells, idle)
		switch {
		case i == 0:
			rows[14].cells = append(rows[14].cells, pair("memsync hook SessionStart p95", c, b.hookP50, b.hookP95, millis, targetHook))
		case b.hookP95.ok():
			rows[14].cells = append(rows[14].cells, "not run (the figure reads the embedded graph)")
		default:
			rows[14].cells = append(rows[14].cells, "")
		}
		if o.idleChurn > 0 || c.na != "" {
			rows[15].cells = append(rows[15].cells, cell("daemon CPU with a shared record per interval", c, c.idleChurnCPU, func(v float64) string { return fmt.Sprintf("%.2f %%", v) }, targetChurnCPU))
		} else {
			rows[15].cells = append(rows[15].cells, "not run (`--idle-churn 10s`)")
		}
		rows[16].cells = append(rows[16].cells, modelCostCell(c, cell))
	}
	columns := []string{"figure (median of " + plural(o.runs, "run") + ")"}
	for _, c := range b.columns {
		columns = append(columns, c.b.name)
	}
	return renderTable(columns, rows), checks
}

// report is the markdown written to --out: the machine, the table, the
// targets and every run.
func (b *bench) report(table string, checks []check) string {
	o := b.opts
	m := b.machine
	var w strings.Builder
	fmt.Fprintf(&w, "### Results (%s)\n\n", map[bool]string{true: "quick run", false: "full run"}[o.quick])
	fmt.Fprintf(&w, "- **Machine**: %d CPUs (`nproc`), %s, %s RAM, %s\n", m.cpus, m.cpuModel, m.memory, m.kernel)
	fmt.Fprintf(&w, "- **Go**: %s; **Neo4j**: %s\n", m.goVer, orNA(b.neoVer, "n/a", func(v string) string {
		return fmt.Sprintf("%s at %s, on the same machine", v, b.neoURI)
	}))
	fmt.Fprintf(&w, "- **Date**: %s; took %s min; load average at start %s, at end %s\n",
		m.date.Format("2006-01-02 15:04 MST"), seconds(timeSince(b.started)/60), m.loadAvg, b.loadEnd)
	fmt.Fprintf(&w, "- **Code**: %s\n", m.source)
	fmt.Fprintf(&w, "- **Command**: `go run ./cmd/bench %s`\n", strings.Join(o.args, " "))
	fmt.Fprintf(&w, "- Every figure is the median of %s (search: %s over one loaded graph%s).\n\n",
		plural(o.runs, "run"), map[bool]string{true: "1 pass", false: fmt.Sprintf("%d passes", o.runs)}[o.runs == 1], map[bool]string{true: "", false: "; rebuild: " + plural(o.rebuildRuns, "run")}[o.rebuildRuns == o.runs])
	w.WriteString(table)
	fmt.Fprintf(&w, "\nTargets: %s.\n\n", summary(checks))
	w.WriteString("<details><summary>Every run</summary>\n\n")
	for _, c := range b.columns {
		if c.na != "" {
			fmt.Fprintf(&w, "- %s: n/a (%s)\n", c.b.name, c.na)
			continue
		}
		ms := func(v float64) string { return millis(v) + " ms" }
		fmt.Fprintf(&w, "- %s\n", c.b.name)
		for _, l := range []struct {
			name string
			s    series
			f    func(float64) string
		}{
			{"projection, rebuild path, records/s", c.rebuildPath, thousands},
			{"projection, Graph.Apply, records/s", c.apply, thousands},
			{"naive baseline, records/s", c.naive, thousands},
			{"engine ceiling, records/s", c.ceiling, thousands},
			{"engine ceiling with memsync's keys, records/s", c.keyedCeiling, thousands},
			{"engine ceiling at 4 KiB pages, records/s", c.ceiling4k, thousands},
			{"projection lexical-only (model-cost pairs), records/s", c.model.lexical, thousands},
			{"projection with the built-in model (model-cost pairs), records/s", c.model.model, thousands},
			{"append → visible p50", c.latP50, ms},
			{"append → visible p99", c.latP99, ms},
			{"append → visible max", c.latMax, ms},
			{"append rate achieved, records/s", c.latRate, thousands},
			{"search p50", c.searchP50, ms},
			{"search p95", c.searchP95, ms},
			{"ranked search p50", c.rankP50, ms},
			{"ranked search p95", c.rankP95, ms},
			{"packet p50", c.packetP50, ms},
			{"packet p95", c.packetP95, ms},
			{"packet command p50", c.packetCmdP50, ms},
			{"packet command p95", c.packetCmdP95, ms},
			{"process start (packet --help) p50", c.processStart, ms},
			{"search command p50", c.searchCmdP50, ms},
			{"search command p95", c.searchCmdP95, ms},
			{"importance of every memory after rebuild, s", c.importanceSec, seconds},
			{"rebuild wall, s", c.rebuildWall, seconds},
			{"rebuild phase (as the command reports it), s", c.rebuildPhase, seconds},
			{"rebuild peak RSS, MB", c.peakMB, seconds},
			{"rebuild RSS sampled while rebuilding (peak), MB", c.rebuildPeak, seconds},
			{"rebuild RSS sampled while verifying (peak), MB", c.verifyPeak, seconds},
			{"daemon idle VmRSS, MB", c.idleMB, seconds},
			{"daemon idle VmHWM, MB", c.idleHWM, seconds},
			{"daemon catch-up, s", c.idleCatchUp, seconds},
			{"daemon settled (a second without CPU), s", c.idleSettled, seconds},
			{"daemon idle CPU, % of one core", c.idleCPU, seconds},
			{"daemon CPU with a shared record per --idle-churn, % of one core", c.idleChurnCPU, seconds},
		} {
			if l.s.na == "not run" {
				continue
			}
			fmt.Fprintf(&w, "  - %s: %s\n", l.name, runsList(l.s, l.f))
		}
		for _, f := range []string{"projection, rebuild path", "projection, Graph.Apply", "naive baseline", "engine ceiling"} {
			if runs := c.cpu[f]; len(runs) > 0 {
				fmt.Fprintf(&w, "  - time and CPU, %s: %s\n", f, strings.Join(runs, "; "))
			}
		}
		if c.searchHits > 0 {
			fmt.Fprintf(&w, "  - search: %d hits over %d queries (limit 10)\n", c.searchHits, o.searchQueries)
		}
	}
	if b.appendMS.na != "not run" {
		fmt.Fprintf(&w, "- memsync append p50 per run, ms: %s\n", runsList(b.appendMS, millis))
		if o.appendEmbedder != "" {
			fmt.Fprintf(&w, "- memsync append --embedder %s p50 per run (each right after the words-only run), ms: %s\n", o.appendEmbedder, runsList(b.appendVecMS, millis))
		}
	}
	if b.hookP95.na != "not run" {
		fmt.Fprintf(&w, "- memsync hook SessionStart p50 / p95 per run, ms: %s / %s\n", runsList(b.hookP50, millis), runsList(b.hookP95, millis))
	}
	w.WriteString("\n</details>\n")
	return w.String()
}

// runsNote says how many runs a figure had when it is not the usual number.
func runsNote(n, usual int) string {
	if n == usual {
		return ""
	}
	return ", median of " + plural(n, "run")
}

func orNA(v, na string, f func(string) string) string {
	if v == "" {
		return na
	}
	return f(v)
}

// Markers delimit the generated part of the --out file.
const (
	beginMarker = "<!-- bench:begin — generated by `go run ./cmd/bench`; replaced on every run -->"
	endMarker   = "<!-- bench:end -->"
)

// writeReport puts section between the markers of the file at path,
// keeping what surrounds them; a file without markers (or no file) gets a
// title and the section. Anything but a regular file (/dev/null) is simply
// written to.
func writeReport(path, section string) error {
	block := beginMarker + "\n" + section + endMarker + "\n"
	st, err := os.Stat(path)
	if err == nil && !st.Mode().IsRegular() {
		return os.WriteFile(path, []byte(block), 0o644)
	}
	var doc []byte
	if old, err := os.ReadFile(path); err == nil {
		doc = spliceReport(old, block)
	} else if os.IsNotExist(err) {
		doc = []byte("# memsync benchmarks\n\n" + block)
	} else {
		return err
	}
	return journal.WriteAtomic(path, doc)
}

// spliceReport replaces the marked block of old with block, or appends
// block when old has no (complete) markers.
func spliceReport(old []byte, block string) []byte {
	i := bytes.Index(old, []byte(beginMarker))
	j := bytes.Index(old, []byte(endMarker))
	if i < 0 || j < i {
		out := bytes.TrimRight(old, "\n")
		return append(out, []byte("\n\n"+block)...)
	}
	end := j + len(endMarker)
	if end < len(old) && old[end] == '\n' {
		end++
	}
	out := append([]byte(nil), old[:i]...)
	out = append(out, block...)
	return append(out, old[end:]...)
}
