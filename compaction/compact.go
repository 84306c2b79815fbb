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
	StepJournal = "journal" // blank the archived lines of each journal, in place
	// StepBlank is only "blank:<file>", called while the journal's lock is
	// held (a hook must not append to it then), when half the file's
	// archived lines are blanked.
	StepBlank  = "blank"
	StepCommit = "commit" // commit through Options.Commit
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
		layout: journal.Layout{Root: opts.Root}}
	if _, err := os.Stat(c.layout.MemoryDir(opts.Agent)); err != nil {
		return rep, fmt.Errorf("compaction: agent %s: %w", opts.Agent, err)
	}
	if !opts.DryRun {
		unlock, err := c.lock()
		if err != nil {
			return rep, err
		}
		defer unlock()
		var dirs []string
		for _, d := range []string{c.layout.MemoryDir(opts.Agent), c.entitiesDir(), c.layout.JournalDir(opts.Agent),
			c.layout.ArchiveDir(opts.Agent)} {
			if journal.RealDir(opts.Root, d) == nil { // never reach through a link
				dirs = append(dirs, d)
			}
		}
		sweepTemp(c.lg, time.Now(), dirs...)
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
	layout journal.Layout
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
	c := &compactor{opts: Options{Root: root, Agent: agent}, layout: journal.Layout{Root: root}}
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
	p, err := makePlan(c.layout, jdir, adir, today, c.opts.KeepDays, c.opts.MaxDayLines, c.opts.DryRun)
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	for _, f := range p.files {
		rep.Files = append(rep.Files, *f)
		rep.Absorbed += f.Absorbed
	}
	rep.Resumed = p.resumed
	rep.Items = p.items
	if c.opts.DryRun || len(p.files) == 0 {
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
		if err := c.removeArchived(f.File, archived, p.torn[f.File]); err != nil {
			return fmt.Errorf("blank archived lines of journal %s: %w", f.File, err)
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
		// The host id keeps two hosts compacting the same day in the same
		// second from writing one uuid twice (SPEC §12).
		host, err := journal.HostID(c.opts.Root)
		if err != nil {
			return uuids, err
		}
		opts := journal.AppendOptions{Now: c.opts.Now, Root: c.opts.Root, SequenceFile: c.layout.SequenceFile(c.opts.Agent), Host: host}
		if _, err := journal.Append(c.layout.JournalDir(c.opts.Agent), rec, opts); err != nil {
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
	if err := journal.RealDir(c.opts.Root, adir); err != nil {
		return 0, err // never write through a link: it may lead out of the repository
	}
	_, statErr := os.Stat(adir)
	if err := os.MkdirAll(adir, 0o755); err != nil {
		return 0, err
	}
	if statErr != nil {
		if err := journal.SyncDir(filepath.Dir(adir)); err != nil {
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
	src, err := journal.OpenNoFollow(jpath, os.O_RDONLY, 0)
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
	return copied, journal.SyncDir(adir)
}

// removeArchived blanks, in place, the lines of journal/<name> whose record
// version is in archived, and the lines plan found half blanked (torn): each
// becomes spaces up to its newline, which every reader skips as a blank
// line. Nothing else in the file changes: not its other bytes, its inode,
// its size nor the numbers of its lines.
//
// The journal is never renamed, truncated or removed, because agents may
// append to it directly (one write(2) per line, O_APPEND) without the lock:
// a writer that opened the file before a rename, or keeps its descriptor
// open, would go on writing into the replaced inode and its lines would be
// lost. A positioned write inside lines already archived cannot collide with
// an append, which always lands at the end of the file. The journal's
// exclusive lock is still taken so that no memsync append is running.
//
// Lines are blanked in file order, each line's bytes front to back, and
// fsynced at the end. A crash part-way leaves some archived lines whole,
// which the next run absorbs again (copying nothing twice); a power cut may
// also leave one line partly blanked: a rejected line whose bytes are its
// archived original's or spaces, which plan recognises (see tornLines) and
// the next run blanks.
func (c *compactor) removeArchived(name string, archived map[string]bool, torn []tornLine) error {
	dir := c.layout.JournalDir(c.opts.Agent)
	path := filepath.Join(dir, name)
	f, err := lockJournal(path)
	if err != nil || f == nil {
		return err
	}
	defer f.Close()      // releases the lock
	var spans [][2]int64 // [offset, end) of the lines to blank
	err = eachLineOf(f, path, func(l journal.Line) error {
		if l.Err == nil && l.Record.Agent == c.opts.Agent && archived[recordKey(&l.Record)] {
			spans = append(spans, [2]int64{l.Offset, l.End})
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, tl := range torn {
		// Checked again under the lock: the bytes must still be a torn copy.
		b := make([]byte, len(tl.original))
		if _, err := f.ReadAt(b, tl.offset); err != nil {
			if errors.Is(err, io.EOF) {
				continue
			}
			return err
		}
		if isTornCopy(b, tl.original) {
			spans = append(spans, [2]int64{tl.offset, tl.offset + int64(len(b))})
		}
	}
	if len(spans) == 0 {
		return nil
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	half := len(spans) / 2
	if err := blankSpans(f, spans[:half]); err != nil {
		return err
	}
	if err := c.hook(StepBlank + ":" + name); err != nil {
		return err
	}
	if err := blankSpans(f, spans[half:]); err != nil {
		return err
	}
	return f.Sync()
}

// isTornCopy reports whether line (a journal line with its newline) is
// original (an archived line) with some bytes turned into spaces: a line
// removeArchived did not finish blanking.
func isTornCopy(line, original []byte) bool {
	if len(line) != len(original) || len(line) < 2 || line[len(line)-1] != '\n' {
		return false
	}
	for i := range line {
		if line[i] != original[i] && line[i] != ' ' {
			return false
		}
	}
	return true
}

// blankSpans overwrites each line [offset, end) of f with spaces, keeping
// its newline at end-1. Adjacent lines are written together, at most
// 1 MiB at a time.
func blankSpans(f *os.File, spans [][2]int64) error {
	var buf []byte
	var at int64
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		_, err := f.WriteAt(buf, at)
		buf = buf[:0]
		return err
	}
	for _, sp := range spans {
		if len(buf) > 0 && (at+int64(len(buf)) != sp[0] || len(buf) >= 1<<20) {
			if err := flush(); err != nil {
				return err
			}
		}
		if len(buf) == 0 {
			at = sp[0]
		}
		for i := sp[0]; i < sp[1]-1; i++ {
			buf = append(buf, ' ')
		}
		buf = append(buf, '\n')
	}
	return flush()
}

// writePages regenerates MEMORY.md's section and the entity pages from the
// whole archive (so the result depends on the archive alone, and a rerun
// writes the same thing), writing only the pages that change.
func (c *compactor) writePages(ctx context.Context, rep *Report) error {
	agent := c.opts.Agent
	adir := c.layout.ArchiveDir(agent)
	f, err := foldArchive(c.layout, adir, agent)
	if err != nil {
		return fmt.Errorf("read archive: %w", err)
	}
	body := f.memoryBody()
	rep.Summary = "deterministic"
	if len(c.opts.Summarizer) > 0 {
		md, err := summarize(ctx, c.opts.Summarizer, c.opts.SummarizerTimeout, c.layout, adir, agent, f)
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
