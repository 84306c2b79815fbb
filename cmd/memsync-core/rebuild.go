package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/ledger"
	"github.com/memsync/memsync/memsync"
)

const rebuildDescription = `Drop the graph's projection and build it again from git: every agent's
journals and archives in the work tree, and with --from-history every
journal and archive in every commit reachable from HEAD too (records that
only history still has: a journal deleted or rewritten later; union by uuid,
the work tree's version first). Records are streamed, so memory does not
grow with their number. Afterwards every agent's cursors stand at the end of
its journals (a daemon goes on from there) and the graph is verified against
the journals. Reads go on while it runs: on the embedded store they answer
from the journals ("offline": true, the note naming the rebuild) until it
is done; Neo4j answers from the generation before until the switch. It
refuses to run while a daemon runs on the repository (stop the daemon first), and a daemon does not
start while it runs. Nothing happens without --yes.`

// rebuildJSON is the document rebuild --json prints.
type rebuildJSON struct {
	Projected     int                  `json:"projected"`       // work-tree records projected
	Rejected      int                  `json:"rejected"`        // lines recorded as rejects
	FromHistory   int                  `json:"from_history"`    // records read from history
	OnlyInHistory int                  `json:"only_in_history"` // of those, records the work tree lacks
	Seconds       float64              `json:"seconds"`
	Verify        memsync.VerifyReport `json:"verify"`
}

func runRebuild(ctx context.Context, env *Env, args []string) int {
	fs := newRepoCmd(env, "rebuild", "rebuild [--from-history] --yes [--json] [--repo DIR] [--graph embedded|neo4j] [flags]", rebuildDescription)
	addGraphitiFlags(fs.FlagSet, &fs.cfg)
	fromHistory := fs.Bool("from-history", false, "also recover records from every commit reachable from HEAD")
	yes := fs.Bool("yes", false, "really drop and rebuild the projection")
	asJSON := fs.Bool("json", false, "print one JSON document")
	repo, pos, code, done := fs.load(args)
	if done {
		return code
	}
	if len(pos) > 0 {
		return fs.usageErr("unexpected argument %q", pos[0])
	}
	if !*yes {
		return fs.usageErr("this drops the whole graph projection and builds it again from git, " +
			"which takes a while (reads answer from the journals or, on Neo4j, the generation before until it is done); run again with --yes to go ahead")
	}
	// Under a running daemon, a rebuild would leave it writing into a store
	// of another generation: its search index would be built again at
	// every write until it restarted.
	lock, code, done := lockRepo(fs.cmdFlags, repo, "rebuild", "stop it first, rebuild, then start it again")
	if done {
		return code
	}
	defer lock.Release() //nolint:errcheck // nothing to do about it
	cfg := &fs.cfg
	if *fromHistory {
		if _, err := os.Stat(filepath.Join(repo, ".git")); err != nil {
			return fs.usageErr("--from-history needs a git work tree, and %s has no .git", repo)
		}
	}
	lg, err := newLogger(cfg, env.Stderr)
	if err != nil {
		return fs.fail("%v", err)
	}
	g, err := openGraph(ctx, cfg, repo, lg)
	if err != nil {
		return fs.fail("open graph: %v", err)
	}
	defer g.Close()

	// The progress bar's total is counted beside the rebuild, not before it.
	prog := newProgress(env.Stderr, env.Now)
	counted := make(chan struct{})
	defer func() { <-counted }()
	go func() {
		defer close(counted)
		if total, err := memsync.CountJournalLines(repo); err == nil {
			prog.total.Store(int64(total))
		} else {
			lg.Debug("count journal lines for the progress bar", zap.Error(err))
		}
	}()
	var extra memsync.Source
	if *fromHistory {
		history := ledger.HistoryRecords(repo, lg)
		extra = func(ctx context.Context, yield func(memsync.Memory) error) error {
			prog.phase("history")
			return history(ctx, yield)
		}
	}
	// The rebuild's own read of the journals is the journals' side of the
	// verify below, unless they changed meanwhile (memsync.VerifyTallied).
	tally, err := memsync.NewJournalTally(memsync.Layout{Root: repo}.LocalDir())
	if err != nil {
		lg.Warn("verify will read the journals again", zap.Error(err))
	} else {
		defer tally.Close()
	}
	eng, err := memsync.New(memsync.Options{Root: repo, Graph: g, Logger: lg, Now: env.Now,
		BatchSize: cfg.Daemon.BatchSize, Progress: prog.add, Tally: tally})
	if err != nil {
		return fs.fail("%v", err)
	}
	start := env.Now()
	rep, err := eng.Rebuild(ctx, extra)
	prog.done()
	if err != nil {
		return fs.fail("%v (run it again: rebuild starts over)", err)
	}
	elapsed := env.Now().Sub(start)
	debug.FreeOSMemory() // the rebuild's batches are garbage now; keep the peak down
	ver, err := memsync.VerifyTallied(ctx, repo, g, tally)
	if err != nil {
		return fs.fail("verify: %v", err)
	}
	// Records recovered from history are, by design, in no journal of the
	// work tree: verify counts them as extra.
	ok := ver.Missing == 0 && ver.Different == 0 && ver.Extra <= rep.SourceAdded
	if *asJSON {
		out, _ := json.MarshalIndent(rebuildJSON{Projected: rep.Projected, Rejected: rep.Rejected,
			FromHistory: rep.FromSource, OnlyInHistory: rep.SourceAdded, Seconds: elapsed.Seconds(), Verify: ver}, "", "  ")
		fmt.Fprintf(env.Stdout, "%s\n", out)
	} else {
		fmt.Fprintf(env.Stdout, "rebuilt in %s: %d records from the work tree's journals, %d rejected lines",
			elapsed.Round(time.Millisecond), rep.Projected, rep.Rejected)
		if *fromHistory {
			fmt.Fprintf(env.Stdout, "; %d records read from history, %d found only there", rep.FromSource, rep.SourceAdded)
		}
		fmt.Fprintln(env.Stdout)
		verdict := "ok"
		if !ok {
			verdict = "DIFFERS"
		}
		fmt.Fprintf(env.Stdout, "verify %s: %d journal records, %d in the graph; missing %d, extra %d, different %d, conflicts %d\n",
			verdict, ver.JournalRecords, ver.GraphRecords, ver.Missing, ver.Extra, ver.Different, ver.Conflicts)
		if *fromHistory && ver.Extra > 0 {
			fmt.Fprintf(env.Stdout, "  the %d extra records are those recovered from history\n", ver.Extra)
		}
		for _, l := range []struct {
			name string
			ids  []string
		}{{"missing", ver.MissingUUIDs}, {"different", ver.DifferentUUIDs}} {
			if len(l.ids) > 0 {
				fmt.Fprintf(env.Stdout, "  %s: %s\n", l.name, strings.Join(l.ids, " "))
			}
		}
	}
	if !ok {
		return exitFail
	}
	return exitOK
}

// progress shows a rebuild's progress on stderr: a bar redrawn in place on
// a terminal, else a plain line every few seconds (logs, CI).
type progress struct {
	w      io.Writer
	tty    bool
	total  atomic.Int64 // work-tree lines, once counted; history has no known total
	now    func() time.Time
	start  time.Time
	last   time.Time
	stage  string
	count  int // records in this stage
	drawn  bool
	period time.Duration
}

func newProgress(w io.Writer, now func() time.Time) *progress {
	p := &progress{w: w, now: now, stage: "journals", period: 5 * time.Second}
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		p.tty, p.period = true, 100*time.Millisecond
	}
	p.start, p.last = now(), now()
	return p
}

func (p *progress) add(records int) {
	p.count += records
	if t := p.now(); t.Sub(p.last) >= p.period {
		p.last = t
		p.draw()
	}
}

func (p *progress) phase(name string) {
	p.draw()
	if p.tty {
		fmt.Fprintln(p.w)
	}
	p.stage, p.count, p.drawn = name, 0, false
	p.start = p.now()
}

func (p *progress) done() {
	p.draw()
	if p.tty && p.drawn {
		fmt.Fprintln(p.w)
	}
}

func (p *progress) draw() {
	elapsed := p.now().Sub(p.start).Round(100 * time.Millisecond)
	line := fmt.Sprintf("rebuild %s: %d records, %s", p.stage, p.count, elapsed)
	if total := int(p.total.Load()); p.stage == "journals" && total > 0 {
		frac := float64(p.count) / float64(total)
		if frac > 1 {
			frac = 1
		}
		const width = 30
		fill := int(frac * width)
		line = fmt.Sprintf("rebuild %s [%s%s] %3.0f%% %d/%d records, %s", p.stage,
			strings.Repeat("#", fill), strings.Repeat(".", width-fill), frac*100, p.count, total, elapsed)
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
	p.drawn = true
}
