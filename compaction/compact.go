package compaction

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// DefaultMaxDayLines is how many records a day's journal may hold before it
// is compacted although its day is not over.
const DefaultMaxDayLines = 500

// The steps of a compaction, in the order they run. Options.Hook is called
// before each with its name, and before each file of the archive and journal
// steps with "archive:<file>" or "journal:<file>".
const (
	StepRecord  = "record"  // append the compaction record(s) naming every absorbed uuid
	StepArchive = "archive" // copy absorbed lines to journal/archive/<day>.jsonl, fsync
	StepMemory  = "memory"  // regenerate MEMORY.md's and the entity pages' generated sections
	StepJournal = "journal" // rewrite each journal without the archived lines
	StepCommit  = "commit"  // commit through Options.Commit
)

// maxAbsorbedBytes bounds the absorbed list of one compaction record, well
// under the 1 MiB line limit; more uuids take more records.
const maxAbsorbedBytes = 512 << 10

// ErrBusy means another compaction of the same agent is running.
var ErrBusy = errors.New("another compaction of this agent is running")

// ErrNotCommitted, wrapped in what Options.Commit returns, means the commit
// was put off (git busy, say) without failing the compaction: its files are
// complete and the next commit records them.
var ErrNotCommitted = errors.New("not committed")

// Options configure the compaction of one agent.
type Options struct {
	Root  string // the memory repository; required
	Agent string // required
	// KeepDays is how many days before the current UTC day keep their
	// journals; older days are compacted. 0 compacts every day but today;
	// negative keeps every day (only overfull days are compacted).
	KeepDays int
	// MaxDayLines: a kept day whose journal holds more records is
	// compacted too. 0 means DefaultMaxDayLines; negative, never.
	MaxDayLines int
	// Summarizer is the argv of a command that reads records (canonical
	// JSON, one per line) on stdin and prints markdown for MEMORY.md's
	// generated section. Empty: the deterministic text. If it fails, the
	// deterministic text is used and the failure logged.
	Summarizer        []string
	SummarizerTimeout time.Duration // DefaultSummarizerTimeout when 0
	// Commit records the result in git (ledger.Committer.CommitNow); nil
	// leaves committing to the daemon's auto-commit.
	Commit func(ctx context.Context, message string) error
	// DryRun plans and reports, and writes nothing at all.
	DryRun bool
	Now    func() time.Time // time.Now when nil
	Logger *zap.Logger      // zap.NewNop() when nil
	// Hook, when set, is called before each step (see StepRecord) and
	// may fail it; tests use it to crash a compaction at every step.
	Hook func(step string) error
}

// Report says what a compaction did (or, dry, would do).
type Report struct {
	Agent    string       `json:"agent"`
	DryRun   bool         `json:"dry_run,omitempty"`
	Absorbed int          `json:"absorbed"` // journal lines moved to the archive
	Resumed  int          `json:"resumed"`  // of those, lines an interrupted compaction had claimed
	Files    []FileReport `json:"files,omitempty"`
	Records  []string     `json:"records,omitempty"` // uuids of the compaction records appended
	Archived int          `json:"archived"`          // lines copied to the archive (the rest were there already)
	Pages    []string     `json:"pages,omitempty"`   // MEMORY.md and entity pages rewritten, repo-relative
	Summary  string       `json:"summary,omitempty"` // "summarizer" or "deterministic"
	Commit   string       `json:"commit,omitempty"`  // "committed", "skipped: ..." or ""
	Items    []Item       `json:"items,omitempty"`   // dry run: every line that would be absorbed
}

// Compact folds the agent's old (or overfull) journal lines into its
// MEMORY.md and entity pages and moves them to journal/archive/, losing
// nothing on a crash at any point; see the package documentation for the
// order of the steps and why. Running it again right after changes nothing.
func Compact(ctx context.Context, opts Options) (Report, error) {
	rep := Report{Agent: opts.Agent, DryRun: opts.DryRun}
	if opts.Root == "" || !journal.ValidAgent(opts.Agent) {
		return rep, fmt.Errorf("compaction: Options.Root and a valid Options.Agent are required")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.MaxDayLines == 0 {
		opts.MaxDayLines = DefaultMaxDayLines
	} else if opts.MaxDayLines < 0 {
		opts.MaxDayLines = int(^uint(0) >> 1)
	}
	if opts.SummarizerTimeout <= 0 {
		opts.SummarizerTimeout = DefaultSummarizerTimeout
	}
	c := &compactor{opts: opts, lg: opts.Logger.With(zap.String("agent", opts.Agent)),
		layout: memsync.Layout{Root: opts.Root}}
	if _, err := os.Stat(c.layout.MemoryDir(opts.Agent)); err != nil {
		return rep, fmt.Errorf("compaction: agent %s: %w", opts.Agent, err)
	}
	if !opts.DryRun {
		unlock, err := c.lock()
		if err != nil {
			return rep, err
		}
		defer unlock()
		sweepTemp(c.lg, c.layout.MemoryDir(opts.Agent), c.entitiesDir(), c.layout.JournalDir(opts.Agent),
			c.layout.ArchiveDir(opts.Agent))
	}
	err := c.run(ctx, &rep)
	if err != nil {
		return rep, fmt.Errorf("compaction of %s: %w", opts.Agent, err)
	}
	return rep, nil
}

type compactor struct {
	opts   Options
	lg     *zap.Logger
	layout memsync.Layout
}

func (c *compactor) entitiesDir() string {
	return filepath.Join(c.layout.MemoryDir(c.opts.Agent), "entities")
}

func (c *compactor) hook(step string) error {
	if c.opts.Hook == nil {
		return nil
	}
	if err := c.opts.Hook(step); err != nil {
		return fmt.Errorf("before step %s: %w", step, err)
	}
	return nil
}

// Lock takes agent's compaction lock (host-local, in .memsync/) for a job
// that must not run beside its compaction (the consolidation cycle, which
// also rewrites MEMORY.md and reads the journals compaction moves):
// ErrBusy when it is held. The func returned releases it.
func Lock(root, agent string) (func(), error) {
	c := &compactor{opts: Options{Root: root, Agent: agent}, layout: memsync.Layout{Root: root}}
	return c.lock()
}

// lock takes the agent's compaction lock in .memsync/ (host-local).
func (c *compactor) lock() (func(), error) {
	dir := c.layout.LocalDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("compaction: %w", err)
	}
	path := filepath.Join(dir, "compact-"+c.opts.Agent+".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("compaction: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("compaction of %s: %w", c.opts.Agent, ErrBusy)
		}
		return nil, fmt.Errorf("compaction: lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

func (c *compactor) run(ctx context.Context, rep *Report) error {
	agent := c.opts.Agent
	jdir, adir := c.layout.JournalDir(agent), c.layout.ArchiveDir(agent)
	today := c.opts.Now().UTC().Truncate(24 * time.Hour)
	p, err := makePlan(jdir, adir, today, c.opts.KeepDays, c.opts.MaxDayLines, c.opts.DryRun)
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	for _, f := range p.files {
		rep.Files = append(rep.Files, *f)
		rep.Absorbed += f.Absorbed
	}
	rep.Resumed = p.resumed
	rep.Items = p.items
	if c.opts.DryRun || len(p.absorb) == 0 {
		return nil
	}
	c.lg.Info("compacting", zap.Int("lines", rep.Absorbed), zap.Int("resumed", rep.Resumed), zap.Int("files", len(p.files)))

	if err := c.hook(StepRecord); err != nil {
		return err
	}
	if rep.Records, err = c.appendRecords(p); err != nil {
		return fmt.Errorf("append compaction record: %w", err)
	}

	if err := c.hook(StepArchive); err != nil {
		return err
	}
	archived := map[string]bool{} // record versions now safely in the archive
	for _, f := range p.files {
		if err := c.hook(StepArchive + ":" + f.File); err != nil {
			return err
		}
		n, err := c.archive(f.File, p.absorb, archived)
		if err != nil {
			return fmt.Errorf("archive %s: %w", f.File, err)
		}
		rep.Archived += n
	}

	if err := c.hook(StepMemory); err != nil {
		return err
	}
	if err := c.writePages(ctx, rep); err != nil {
		return err
	}

	if err := c.hook(StepJournal); err != nil {
		return err
	}
	for _, f := range p.files {
		if err := c.hook(StepJournal + ":" + f.File); err != nil {
			return err
		}
		if err := c.removeArchived(f.File, archived); err != nil {
			return fmt.Errorf("rewrite journal %s: %w", f.File, err)
		}
	}

	if err := c.hook(StepCommit); err != nil {
		return err
	}
	if c.opts.Commit != nil {
		msg := fmt.Sprintf("memsync: compact %s: %d records archived\n\n%s", agent, rep.Absorbed, filesLine(rep.Files))
		switch err := c.opts.Commit(ctx, msg); {
		case errors.Is(err, ErrNotCommitted):
			rep.Commit = "skipped: " + err.Error()
			c.lg.Warn("compaction not committed: the next commit will record it", zap.Error(err))
		case err != nil:
			return fmt.Errorf("commit: %w", err)
		default:
			rep.Commit = "committed"
		}
	}
	c.lg.Info("compacted", zap.Int("lines", rep.Absorbed), zap.Strings("records", rep.Records), zap.Strings("pages", rep.Pages))
	return nil
}

func filesLine(files []FileReport) string {
	var parts []string
	for _, f := range files {
		parts = append(parts, fmt.Sprintf("%s: %d (%s)", f.File, f.Absorbed, f.Reason))
	}
	return strings.Join(parts, "\n") + "\n"
}

// appendRecords writes the compaction record(s) for the newly absorbed
// uuids, before anything moves: a run interrupted later finds them and
// finishes their work.
func (c *compactor) appendRecords(p *plan) ([]string, error) {
	if len(p.newUUIDs) == 0 {
		return nil, nil
	}
	var chunks [][]string
	var cur []string
	size := 0
	for _, id := range p.newUUIDs {
		if size+len(id)+3 > maxAbsorbedBytes && len(cur) > 0 {
			chunks = append(chunks, cur)
			cur, size = nil, 0
		}
		cur = append(cur, id)
		size += len(id) + 3
	}
	chunks = append(chunks, cur)
	now := c.opts.Now().UTC().Truncate(time.Microsecond)
	text := c.recordText(p)
	var uuids []string
	for i, ids := range chunks {
		raw, err := json.Marshal(ids)
		if err != nil {
			return uuids, err
		}
		t := text
		if len(chunks) > 1 {
			t = fmt.Sprintf("%s (part %d of %d)", text, i+1, len(chunks))
		}
		rec := &journal.Record{TS: now, Agent: c.opts.Agent, Kind: journal.KindCompaction, Scope: journal.ScopePrivate,
			Text: t, Extra: map[string]json.RawMessage{AbsorbedField: raw}}
		if _, err := journal.Append(c.layout.JournalDir(c.opts.Agent), rec, journal.AppendOptions{Now: c.opts.Now}); err != nil {
			return uuids, err
		}
		uuids = append(uuids, rec.UUID)
	}
	return uuids, nil
}

func (c *compactor) recordText(p *plan) string {
	kinds := make([]string, 0, len(p.kinds))
	for k := range p.kinds {
		kinds = append(kinds, string(k))
	}
	sort.Strings(kinds)
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%d %s", p.kinds[journal.Kind(k)], k))
	}
	return fmt.Sprintf("Compacted %d records from %s to %s into MEMORY.md and moved them to journal/archive/: %s.",
		len(p.newUUIDs), day(p.first), day(p.last), strings.Join(parts, ", "))
}

// archive appends to archive/<name> every line of journal/<name> whose uuid
// is absorbed and whose exact record the archive does not hold yet, then
// fsyncs the archive and its directory. Every absorbed record version found
// (copied or already there) is added to archived. It returns the lines copied.
func (c *compactor) archive(name string, absorb, archived map[string]bool) (int, error) {
	jpath := filepath.Join(c.layout.JournalDir(c.opts.Agent), name)
	adir := c.layout.ArchiveDir(c.opts.Agent)
	apath := filepath.Join(adir, name)
	_, statErr := os.Stat(adir)
	if err := os.MkdirAll(adir, 0o755); err != nil {
		return 0, err
	}
	if statErr != nil {
		if err := syncDir(filepath.Dir(adir)); err != nil {
			return 0, err
		}
	}
	if err := repairTail(c.lg, apath, c.opts.Now()); err != nil {
		return 0, fmt.Errorf("repair %s: %w", apath, err)
	}
	have, err := archiveKeys(apath)
	if err != nil {
		return 0, err
	}
	src, err := os.Open(jpath)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil // already rewritten away
	}
	if err != nil {
		return 0, err
	}
	defer src.Close()
	dst, err := os.OpenFile(apath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return 0, err
	}
	defer dst.Close()
	w := bufio.NewWriterSize(dst, 256<<10)
	copied := 0
	err = eachLineOf(src, jpath, func(l journal.Line) error {
		if l.Err != nil || l.Record.Agent != c.opts.Agent || !absorb[l.Record.UUID] {
			return nil
		}
		k := recordKey(&l.Record)
		archived[k] = true
		if have[k] {
			return nil
		}
		have[k] = true
		if _, err := io.Copy(w, io.NewSectionReader(src, l.Offset, l.End-l.Offset)); err != nil {
			return err
		}
		copied++
		return nil
	})
	if err != nil {
		return 0, err
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	if err := dst.Sync(); err != nil {
		return 0, err
	}
	if err := dst.Close(); err != nil {
		return 0, err
	}
	return copied, syncDir(adir)
}

// removeArchived rewrites journal/<name> without the lines whose record
// version is in archived, under the journal's exclusive lock so that no
// append is lost: every other byte (other records, rejects, lines appended
// since the plan, a partial last line) is kept as it is. The new file
// replaces the old by rename; a journal left with nothing is removed.
func (c *compactor) removeArchived(name string, archived map[string]bool) error {
	dir := c.layout.JournalDir(c.opts.Agent)
	path := filepath.Join(dir, name)
	f, err := lockJournal(path)
	if err != nil || f == nil {
		return err
	}
	defer f.Close() // releases the lock, after the rename
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, name+tmpSuffix)
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer func() {
		out.Close()
		os.Remove(tmp) // gone already after a successful rename
	}()
	w := bufio.NewWriterSize(out, 256<<10)
	var from int64    // start of the bytes not yet copied
	var lastEnd int64 // end of the last complete line
	removed, keptLines := 0, 0
	keep := func(to int64) error {
		if to <= from {
			return nil
		}
		_, err := io.Copy(w, io.NewSectionReader(f, from, to-from))
		return err
	}
	err = eachLineOf(f, path, func(l journal.Line) error {
		lastEnd = l.End
		if l.Err != nil || l.Record.Agent != c.opts.Agent || !archived[recordKey(&l.Record)] {
			keptLines++
			return nil
		}
		if err := keep(l.Offset); err != nil {
			return err
		}
		from = l.End
		removed++
		return nil
	})
	if err != nil {
		return err
	}
	if removed == 0 {
		return nil
	}
	if err := keep(fi.Size()); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	// Between complete lines only blank lines go unreported; after the
	// last one there may be a partial line, which must be kept.
	tail, err := hasContent(f, lastEnd, fi.Size())
	if err != nil {
		return err
	}
	if keptLines == 0 && !tail {
		if err := os.Remove(path); err != nil {
			return err
		}
		return syncDir(dir)
	}
	if err := out.Sync(); err != nil {
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}

// hasContent reports whether bytes [from, to) of f hold anything but
// white space.
func hasContent(f *os.File, from, to int64) (bool, error) {
	buf := make([]byte, 64<<10)
	for from < to {
		n := int64(len(buf))
		if n > to-from {
			n = to - from
		}
		if _, err := f.ReadAt(buf[:n], from); err != nil && err != io.EOF {
			return false, err
		}
		if len(strings.TrimSpace(string(buf[:n]))) > 0 {
			return true, nil
		}
		from += n
	}
	return false, nil
}

// writePages regenerates MEMORY.md's section and the entity pages from the
// whole archive (so the result depends on the archive alone, and a rerun
// writes the same thing), writing only the pages that change.
func (c *compactor) writePages(ctx context.Context, rep *Report) error {
	agent := c.opts.Agent
	adir := c.layout.ArchiveDir(agent)
	f, err := foldArchive(adir, agent)
	if err != nil {
		return fmt.Errorf("read archive: %w", err)
	}
	body := f.memoryBody()
	rep.Summary = "deterministic"
	if len(c.opts.Summarizer) > 0 {
		md, err := summarize(ctx, c.opts.Summarizer, c.opts.SummarizerTimeout, adir, agent, f)
		if err != nil {
			c.lg.Warn("summarizer failed: MEMORY.md gets the deterministic text instead",
				zap.Strings("command", c.opts.Summarizer), zap.Error(err))
		} else {
			body = fmt.Sprintf("## Compacted memory\n\nSummarized from %d archived records, %s to %s, by the configured summarizer. "+
				"`journal/archive/` keeps every record.\n\n%s\n", f.records, day(f.first), day(f.last), md)
			rep.Summary = "summarizer"
		}
	}
	memPath := filepath.Join(c.layout.MemoryDir(agent), "MEMORY.md")
	changed, err := updatePage(memPath, "Memory of "+agent, body)
	if err != nil {
		return fmt.Errorf("update %s: %w", c.layout.Rel(memPath), err)
	}
	if changed {
		rep.Pages = append(rep.Pages, c.layout.Rel(memPath))
	}
	slugs := make([]string, 0, len(f.entities))
	for s := range f.entities {
		slugs = append(slugs, s)
	}
	sort.Strings(slugs)
	for _, slug := range slugs {
		ef := f.entities[slug]
		path := filepath.Join(c.entitiesDir(), slug+".md")
		changed, err := updatePage(path, ef.title(), ef.body())
		if err != nil {
			return fmt.Errorf("update %s: %w", c.layout.Rel(path), err)
		}
		if changed {
			rep.Pages = append(rep.Pages, c.layout.Rel(path))
		}
	}
	return nil
}
