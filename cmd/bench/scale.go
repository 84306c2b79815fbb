package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/memsync/memsync/journal"
)

// measureScale is the many-files figure (issue 50): a repository of
// --scale-agents agents × --scale-days day files of --scale-records
// records each, written directly as canonical lines, projected by the
// built binary's `memsync sync`; then the built binaries' search, packet,
// status and verify are timed, --runs times each, with their peak RSS.
// The figure prints its own table (not judged against a target).
func (b *bench) measureScale(ctx context.Context, w io.Writer) error {
	o := b.opts
	root := filepath.Join(b.tmp, "scale")
	files := o.scaleAgents * o.scaleDays
	b.logf("scale: writing %s day files of %s records (%d agents × %d days)", thousands(float64(files)),
		thousands(float64(o.scaleRecords)), o.scaleAgents, o.scaleDays)
	if err := writeScaleJournals(root, o.scaleAgents, o.scaleDays, o.scaleRecords); err != nil {
		return fmt.Errorf("scale: write journals: %w", err)
	}
	sync, err := runMeasured(ctx, b.tmp, nil, b.bin, "sync", "--repo", root)
	if err != nil {
		return fmt.Errorf("scale: memsync sync: %w: %s", err, sync.stderr)
	}
	b.logf("scale: memsync sync %s s, peak %d MB", seconds(sync.wall.Seconds()), sync.peakKiB>>10)
	agent := scaleAgent(min(1, o.scaleAgents-1))
	cmds := []struct {
		name string
		args []string
	}{
		{"search", []string{"search", "billing", "--agent", agent}},
		{"packet", []string{"packet", "--role", "executor", "--goal", "billing", "--agent", agent}},
		{"status", []string{"status"}},
		{"verify", []string{"verify"}},
	}
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "\nmany files (issue 50): %s day files, %s records, built binaries, %d runs\n",
		thousands(float64(files)), thousands(float64(files*o.scaleRecords)), o.runs)
	fmt.Fprintln(tw, "command\twall p50 s\twall max s\tpeak RSS max MB\t")
	for _, c := range cmds {
		var walls []float64
		var peak int64
		for range o.runs {
			m, err := runMeasured(ctx, b.tmp, nil, b.bin, append(c.args, "--repo", root)...)
			if err != nil {
				return fmt.Errorf("scale: memsync %s: %w: %s", strings.Join(c.args, " "), err, m.stderr)
			}
			walls = append(walls, m.wall.Seconds())
			peak = max(peak, m.peakKiB)
		}
		b.logf("scale: memsync %s: p50 %s s", c.name, seconds(percentile(walls, 50)))
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%d\t\n", c.name, percentile(walls, 50), percentile(walls, 100), peak>>10)
	}
	fmt.Fprintf(tw, "memsync sync (once, to project them)\t%.1f\t\t%d\t\n", sync.wall.Seconds(), sync.peakKiB>>10)
	return tw.Flush()
}

func scaleAgent(i int) string { return fmt.Sprintf("agent-%04d", i) }

// writeScaleJournals writes agents × days day files of records canonical
// lines each under root: short facts, one in ten linking a uuid no journal
// holds (verify's references that change nothing).
func writeScaleJournals(root string, agents, days, records int) error {
	base := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	words := []string{"billing", "deploy", "rollback", "invoice", "cache", "schema", "queue", "latency"}
	for a := range agents {
		name := scaleAgent(a)
		dir := filepath.Join(root, "agents", name, "memory", "journal")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for d := range days {
			day := base.AddDate(0, 0, d)
			f, err := os.Create(filepath.Join(dir, journal.FileName(day)))
			if err != nil {
				return err
			}
			bw := bufio.NewWriter(f)
			for r := range records {
				ts := day.Add(time.Duration(r) * time.Second)
				rec := journal.Record{
					UUID: fmt.Sprintf("mem_%s_%s_0001", ts.Format("20060102T150405Z"), name),
					TS:   ts, Agent: name, Kind: journal.KindFact, Scope: journal.ScopeShared,
					Text: fmt.Sprintf("%s note %d of day %d: the %s path", words[(a+d+r)%len(words)], r, d, words[(a*7+d)%len(words)]),
				}
				if (a+d+r)%10 == 0 {
					rec.Links = []string{fmt.Sprintf("mem_20250101T000000Z_%s_0009", name)}
				}
				bw.Write(rec.Canonical())
				bw.WriteByte('\n')
			}
			if err := bw.Flush(); err != nil {
				f.Close()
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
		}
	}
	return nil
}
