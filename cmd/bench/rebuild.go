package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/memsync/memsync/graph/embedded"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

// rebuildResult is one `memsync rebuild` run.
type rebuildResult struct {
	wallSec    float64 // the whole command: open, rebuild, verify, exit
	rebuildSec float64 // what the command reports for the rebuild itself
	peakMiB    float64
	// Peak RSS sampled while it rebuilt, and afterwards (its verify pass).
	rebuildPeakMiB, verifyPeakMiB float64
}

// rebuildJSON is the part of `memsync rebuild --json` the benchmark reads.
type rebuildJSON struct {
	Projected int     `json:"projected"`
	Rejected  int     `json:"rejected"`
	Seconds   float64 `json:"seconds"`
	Verify    struct {
		OK             bool `json:"ok"`
		JournalRecords int  `json:"journal_records"`
		GraphRecords   int  `json:"graph_records"`
	} `json:"verify"`
}

// rebuildCommand runs the built `memsync rebuild --yes --json` over repo
// (want records in its journals) as a child and measures it. The embedded
// store is deleted first, so every run builds it from nothing, as on a new
// host; on Neo4j the caller has dropped the graph.
func rebuildCommand(ctx context.Context, b *backend, bin, repo string, want int) (rebuildResult, error) {
	var res rebuildResult
	if err := os.RemoveAll(filepath.Join(repo, ".memsync")); err != nil {
		return res, err
	}
	// The progress line that first shows every record projected marks the
	// end of the rebuild and the start of the verify pass.
	done := fmt.Sprintf("%d/%d records", want, want)
	m, err := runMeasured(ctx, b.tmp, func(line string) bool { return strings.Contains(line, done) },
		bin, append([]string{"rebuild", "--yes", "--json", "--repo", repo}, b.cliArgs()...)...)
	if err != nil {
		return res, err
	}
	var out rebuildJSON
	if err := json.Unmarshal(m.stdout, &out); err != nil {
		return res, fmt.Errorf("memsync rebuild --json: %w: %.200s", err, m.stdout)
	}
	if out.Projected != want || out.Rejected != 0 || !out.Verify.OK || out.Verify.GraphRecords != want {
		return res, fmt.Errorf("memsync rebuild: projected %d, rejected %d, verify ok=%t with %d graph records; want %d records",
			out.Projected, out.Rejected, out.Verify.OK, out.Verify.GraphRecords, want)
	}
	res.wallSec = m.wall.Seconds()
	res.rebuildSec = out.Seconds
	res.peakMiB = float64(m.peakKiB) / 1024
	boundary := m.wall - time.Duration((res.wallSec-res.rebuildSec)*float64(time.Second)) // no mark: about where it ended
	if len(m.marks) > 0 {
		boundary = m.marks[0]
	}
	res.rebuildPeakMiB = float64(m.peakBetween(0, boundary)) / 1024
	res.verifyPeakMiB = float64(m.peakBetween(boundary, m.wall+time.Hour)) / 1024
	return res, nil
}

// measureRebuild runs `memsync rebuild` over the rebuild corpus.
func (b *bench) measureRebuild(ctx context.Context, c *column) error {
	o := b.opts
	name := c.b.name
	if b.rebuildRepo == "" {
		b.rebuildRepo = filepath.Join(b.tmp, "rebuild-repo")
		b.logf("writing %s records into the journals of %d agents", thousands(float64(o.rebuildRecords)), o.agents)
		if err := writeJournals(b.rebuildRepo, newGenerator(o.seed, o.agents, true), o.rebuildRecords); err != nil {
			return err
		}
	}
	b.eachN(ctx, c, o.rebuildRuns, "rebuild", func(run int) error {
		r, err := rebuildCommand(ctx, c.b, b.bin, b.rebuildRepo, o.rebuildRecords)
		if err != nil {
			return err
		}
		toMB := func(mib float64) float64 { return mib * 1024 * 1024 / 1e6 }
		c.rebuildWall.add(r.wallSec)
		c.rebuildPhase.add(r.rebuildSec)
		c.peakMB.add(toMB(r.peakMiB))
		c.rebuildPeak.add(toMB(r.rebuildPeakMiB))
		c.verifyPeak.add(toMB(r.verifyPeakMiB))
		b.logf("%s rebuild run %d: %s s wall (rebuild %s s, then verify), peak RSS %s MB (sampled: %s MB while rebuilding, %s MB verifying)",
			name, run+1, seconds(r.wallSec), seconds(r.rebuildSec), seconds(toMB(r.peakMiB)),
			seconds(toMB(r.rebuildPeakMiB)), seconds(toMB(r.verifyPeakMiB)))
		sec, n, err := scoreEverything(ctx, c.b, b.rebuildRepo)
		if err != nil {
			c.importanceSec.err = err
			b.noteFailure(&c.importanceSec, c)
			return nil
		}
		c.importanceSec.add(sec)
		b.logf("%s importance of all %s memories after rebuild run %d: %s s", name, thousands(float64(n)), run+1, seconds(sec))
		return nil
	}, &c.rebuildWall, &c.peakMB)
	return nil
}

// scoreEverything computes importance, confidence and status of every
// memory the rebuilt graph holds, as a snapshot or a full re-rank would:
// Walk, the signals of each 1,000 (Graph.Incoming), score.Evaluate as of
// now. It returns the seconds it took and the memories.
func scoreEverything(ctx context.Context, b *backend, repo string) (float64, int, error) {
	g := memsync.Graph(nil)
	if b.neo != nil {
		g = b.neo.graph
	} else {
		eg, err := embedded.Open(filepath.Join(repo, ".memsync"), nil)
		if err != nil {
			return 0, 0, err
		}
		defer eg.Close()
		g = eg
	}
	start := time.Now()
	var chunk []memsync.Node
	now := time.Now().UTC()
	scored := 0
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		if _, err := read.ScoreNodes(ctx, g, chunk, nil, memsync.Present(now)); err != nil {
			return err
		}
		scored += len(chunk)
		chunk = chunk[:0]
		return nil
	}
	err := g.Walk(ctx, func(n memsync.Node) error {
		chunk = append(chunk, n)
		if len(chunk) == 1000 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return 0, 0, fmt.Errorf("score every memory: %w", err)
	}
	return time.Since(start).Seconds(), scored, nil
}
