package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/journal/importer"
	"github.com/memsync/memsync/memsync"
)

const exportDescription = `Write the memories agent A may see (its own and the shared ones, as
search sees them, read from the journals) to stdout, oldest first: jsonl is
every record as its journal line (memsync's own records included: a backup);
markdown and mcp-memory (the MCP memory server's memory.jsonl, which memsync
import mcp-memory reads back) leave out what search leaves out by default
(superseded memories, memories flagged wrong) and memsync's own records
(feedback, promotions, compaction). An export imported back (memsync import
jsonl or mcp-memory) into the same agent writes nothing, into another agent
each memory once.`

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
	// The agent's view, by search's rule, in two passes over the journals:
	// an index first, then each record read again where it is written.
	if err := exportView(ctx, repo, *agent, *format, env.Now(), env.Stdout); err != nil {
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
	names  bool // the record names other memories (links, supports, conflicts_with, supersedes)
}

// exportIndex is where every record of the repository is (each uuid as
// the version that wins it, journal.ClashWins; lines failing
// journal.Parse or their journal's owner left out), in reading order.
type exportIndex struct {
	l       memsync.Layout
	agents  []string
	files   []string
	entries []exportEntry
	byUUID  map[string]int32
	// named, built by named(), is every entry naming each uuid.
	named map[string][]int32
	// The file read last, kept open for the next read.
	f    *os.File
	fcur int32
	buf  []byte
}

// readExportIndex reads every journal of repo once into an index.
func readExportIndex(ctx context.Context, repo string) (*exportIndex, error) {
	ix := &exportIndex{l: layout(repo), byUUID: map[string]int32{}, fcur: -1}
	var err error
	if ix.agents, err = ix.l.Agents(); err != nil {
		return nil, err
	}
	for ai, a := range ix.agents {
		paths, err := ix.l.JournalFiles(a)
		if err != nil {
			return nil, err
		}
		for _, path := range paths {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			fi := len(ix.files)
			ix.files = append(ix.files, path)
			var clashErr error
			err := exportScan(path, func(ln journal.Line) {
				rec := &ln.Record
				if ln.Err != nil || journal.CheckOwner(rec, a) != nil {
					return
				}
				// Cloned: the parsed uuid may share the line's memory.
				e := exportEntry{ts: rec.TS, uuid: strings.Clone(rec.UUID), off: ln.Offset, len: int32(ln.End - ln.Offset),
					agent: int32(ai), file: int32(fi), shared: rec.Scope == journal.ScopeShared,
					names: len(rec.Links)+len(rec.ConflictsWith)+len(rec.Supersedes) > 0 || len(rec.Supports()) > 0}
				i, dup := ix.byUUID[rec.UUID]
				if !dup {
					ix.byUUID[e.uuid] = int32(len(ix.entries))
					ix.entries = append(ix.entries, e)
					return
				}
				old, err := ix.record(ix.entries[i])
				if err != nil {
					clashErr = err
					return
				}
				mine, theirs := journal.VersionOf(rec, rec.Hash()), journal.VersionOf(&old, old.Hash())
				if mine.Hash != theirs.Hash && journal.ClashWins(mine, theirs) {
					ix.entries[i] = e
				}
			})
			if err == nil {
				err = clashErr
			}
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", ix.l.Rel(path), err)
			}
		}
	}
	return ix, nil
}

// close closes the file kept open.
func (ix *exportIndex) close() {
	if ix.f != nil {
		ix.f.Close()
		ix.f, ix.fcur = nil, -1
	}
}

// record parses the record e indexes, read again from its file.
func (ix *exportIndex) record(e exportEntry) (journal.Record, error) {
	if e.file != ix.fcur {
		ix.close()
		f, err := journal.OpenNoFollow(ix.files[e.file], os.O_RDONLY, 0)
		if err != nil {
			return journal.Record{}, err
		}
		ix.f, ix.fcur = f, e.file
	}
	ix.buf = slices.Grow(ix.buf[:0], int(e.len))[:e.len]
	if _, err := ix.f.ReadAt(ix.buf, e.off); err != nil {
		return journal.Record{}, fmt.Errorf("read %s at %d: %w", ix.l.Rel(ix.files[e.file]), e.off, err)
	}
	rec, err := journal.Parse(bytes.TrimRight(ix.buf, "\r\n"))
	if err != nil || rec.UUID != e.uuid {
		return journal.Record{}, fmt.Errorf("%s changed while exporting (offset %d)", ix.l.Rel(ix.files[e.file]), e.off)
	}
	return rec, nil
}

// view is the entries agent may see (its own, and every shared one),
// oldest first (ts, then uuid), as the offline List orders them.
func (ix *exportIndex) view(agent string) []int32 {
	own := journal.PrivateGroup(agent)
	var out []int32
	for i, e := range ix.entries {
		if e.shared || journal.PrivateGroup(ix.agents[e.agent]) == own {
			out = append(out, int32(i))
		}
	}
	slices.SortFunc(out, func(a, b int32) int {
		x, y := &ix.entries[a], &ix.entries[b]
		if c := x.ts.Compare(y.ts); c != 0 {
			return c
		}
		return strings.Compare(x.uuid, y.uuid)
	})
	return out
}

// exportJSONL writes the records agent may see (its own, and every shared
// one) as canonical journal lines, oldest first (ts, then uuid), as the
// offline List orders them: each uuid as the version that wins it
// (journal.ClashWins), lines failing journal.Parse or their journal's
// owner left out. It reads the journals twice: once for an index of
// where each record is, once to copy each record in order, so memory
// holds the index, not the records.
func exportJSONL(ctx context.Context, repo, agent string, w io.Writer) error {
	ix, err := readExportIndex(ctx, repo)
	if err != nil {
		return err
	}
	defer ix.close()
	ix.byUUID = nil
	view := ix.view(agent)
	bw := bufio.NewWriterSize(w, 64<<10)
	for _, i := range view {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := ix.record(ix.entries[i])
		if err != nil {
			return err
		}
		bw.Write(rec.Canonical())
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// exportScan calls fn for every complete line of the journal at path.
func exportScan(path string, fn func(journal.Line)) error {
	return journal.EachLine(path, func(l journal.Line) error { fn(l); return nil })
}
