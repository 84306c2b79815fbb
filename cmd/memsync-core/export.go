package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/journal/importer"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/offline"
)

const exportDescription = `Write the memories agent A may see (its own and the shared ones, as
search sees them, read from the journals) to stdout, oldest first: jsonl is
every record as its journal line (memsync's own records included: a backup);
markdown and mcp-memory (the MCP memory server's memory.jsonl, which memsync
import mcp-memory reads back) leave out what search leaves out by default
(superseded memories, memories flagged wrong) and memsync's own records
(feedback, promotions, compaction).`

func runExport(ctx context.Context, env *Env, args []string) int {
	c := newFlags(env, "export", "export --agent A --format markdown|mcp-memory|jsonl", exportDescription)
	repoFlag := addRepoFlag(c)
	agent := c.String("agent", "", "the agent `A` whose view is exported (required)")
	format := c.String("format", "", "`F`: markdown, mcp-memory or jsonl (required)")
	positional, code, done := c.parse(args)
	if done {
		return code
	}
	switch {
	case len(positional) > 0:
		return c.usageErr("unexpected arguments %q", positional)
	case *agent == "":
		return c.usageErr("--agent: required")
	case !validAgent(*agent):
		return c.usageErr("--agent: %s", agentNameError(*agent))
	case !slices.Contains(importer.ExportFormats, *format):
		return c.usageErr("--format: %q is not one of %s", *format, strings.Join(importer.ExportFormats, ", "))
	}
	repo, err := existingRepo(env, *repoFlag)
	if err != nil {
		return c.usageErr("%v", err)
	}
	agents, err := listAgents(repo)
	if err != nil {
		return c.fail("%v", err)
	}
	if !slices.Contains(agents, *agent) {
		return c.usageErr("--agent: no agent %q in this repository", *agent)
	}
	if *format == "jsonl" {
		// A backup of every record: streamed, never the agent in memory.
		if err := exportJSONL(ctx, repo, *agent, env.Stdout); err != nil {
			return c.fail("%v", err)
		}
		return exitOK
	}
	groups := []string{journal.SharedGroup, journal.PrivateGroup(*agent)}
	journals := offline.NewJournals(layout(repo))
	nodes, err := journals.List(ctx, memsync.ListQuery{Groups: groups, Limit: math.MaxInt32})
	if err != nil {
		return c.fail("%v", err)
	}
	slices.Reverse(nodes) // oldest first
	var scored map[string]memsync.Scored
	if *format != "jsonl" {
		// What search leaves out by default, by search's own rule.
		if scored, err = memsync.ScoreNodes(ctx, journals, nodes, groups, memsync.Present(env.Now())); err != nil {
			return c.fail("%v", err)
		}
	}
	var recs []journal.Record
	for i := range nodes {
		n := &nodes[i]
		if *format != "jsonl" {
			switch n.Record.Kind {
			case journal.KindFeedback, journal.KindPromotion, journal.KindCompaction:
				continue
			}
			if s, ok := scored[n.UUID]; !ok || s.Result.Retired() {
				continue
			}
		}
		recs = append(recs, n.Record)
	}
	if err := importer.Export(env.Stdout, *format, *agent, recs); err != nil {
		return c.fail("%v", err)
	}
	return exitOK
}

// exportEntry is where one record of an export is: a few fields, not the
// record, so that an export holds an index of the agent's view rather
// than the view (a clash, rare, reads the earlier line again).
type exportEntry struct {
	ts     time.Time
	uuid   string
	off    int64 // the line's offset in its file
	len    int32 // its length, newline included
	agent  int32 // index in the agents read
	file   int32 // index in the files read
	shared bool
}

// exportJSONL writes the records agent may see (its own, and every shared
// one) as canonical journal lines, oldest first (ts, then uuid), as the
// offline List orders them: each uuid as the version that wins it
// (journal.ClashWins), lines failing journal.Parse or their journal's
// owner left out. It reads the journals twice: once for an index of
// where each record is, once to copy each record in order, so memory
// holds the index, not the records.
func exportJSONL(ctx context.Context, repo, agent string, w io.Writer) error {
	l := layout(repo)
	agents, err := l.Agents()
	if err != nil {
		return err
	}
	var files []string
	var entries []exportEntry
	byUUID := map[string]int{}
	var buf []byte
	// readAt parses the record e indexes.
	readAt := func(e exportEntry) (journal.Record, error) {
		f, err := journal.OpenNoFollow(files[e.file], os.O_RDONLY, 0)
		if err != nil {
			return journal.Record{}, err
		}
		defer f.Close()
		buf = slices.Grow(buf[:0], int(e.len))[:e.len]
		if _, err := f.ReadAt(buf, e.off); err != nil {
			return journal.Record{}, fmt.Errorf("read %s at %d: %w", l.Rel(files[e.file]), e.off, err)
		}
		rec, err := journal.Parse(bytes.TrimRight(buf, "\r\n"))
		if err != nil || rec.UUID != e.uuid {
			return journal.Record{}, fmt.Errorf("%s changed while exporting (offset %d)", l.Rel(files[e.file]), e.off)
		}
		return rec, nil
	}
	for ai, a := range agents {
		paths, err := l.JournalFiles(a)
		if err != nil {
			return err
		}
		for _, path := range paths {
			if err := ctx.Err(); err != nil {
				return err
			}
			fi := len(files)
			files = append(files, path)
			var clashErr error
			err := exportScan(path, func(ln journal.Line) {
				rec := &ln.Record
				if ln.Err != nil || journal.CheckOwner(rec, a) != nil {
					return
				}
				// Cloned: the parsed uuid may share the line's memory.
				e := exportEntry{ts: rec.TS, uuid: strings.Clone(rec.UUID), off: ln.Offset, len: int32(ln.End - ln.Offset),
					agent: int32(ai), file: int32(fi), shared: rec.Scope == journal.ScopeShared}
				i, dup := byUUID[rec.UUID]
				if !dup {
					byUUID[e.uuid] = len(entries)
					entries = append(entries, e)
					return
				}
				old, err := readAt(entries[i])
				if err != nil {
					clashErr = err
					return
				}
				mine, theirs := journal.VersionOf(rec, rec.Hash()), journal.VersionOf(&old, old.Hash())
				if mine.Hash != theirs.Hash && journal.ClashWins(mine, theirs) {
					entries[i] = e
				}
			})
			if err == nil {
				err = clashErr
			}
			if err != nil {
				return fmt.Errorf("read %s: %w", l.Rel(path), err)
			}
		}
	}
	byUUID = nil
	own := journal.PrivateGroup(agent)
	entries = slices.DeleteFunc(entries, func(e exportEntry) bool {
		return !e.shared && journal.PrivateGroup(agents[e.agent]) != own
	})
	slices.SortFunc(entries, func(a, b exportEntry) int {
		if c := a.ts.Compare(b.ts); c != 0 {
			return c
		}
		return strings.Compare(a.uuid, b.uuid)
	})
	bw := bufio.NewWriterSize(w, 64<<10)
	var f *os.File
	cur := int32(-1)
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.file != cur {
			if f != nil {
				f.Close()
			}
			if f, err = journal.OpenNoFollow(files[e.file], os.O_RDONLY, 0); err != nil {
				return err
			}
			cur = e.file
		}
		buf = slices.Grow(buf[:0], int(e.len))[:e.len]
		if _, err := f.ReadAt(buf, e.off); err != nil {
			return fmt.Errorf("read %s at %d: %w", l.Rel(files[e.file]), e.off, err)
		}
		rec, err := journal.Parse(bytes.TrimRight(buf, "\r\n"))
		if err != nil || rec.UUID != e.uuid {
			return fmt.Errorf("%s changed while exporting (offset %d)", l.Rel(files[e.file]), e.off)
		}
		bw.Write(rec.Canonical())
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// exportScan calls fn for every complete line of the journal at path.
func exportScan(path string, fn func(journal.Line)) error {
	f, err := journal.OpenNoFollow(path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	r := journal.NewReader(f, 0, 0)
	for {
		ln, err := r.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		fn(ln)
	}
}
