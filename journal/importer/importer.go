// Package importer brings memory kept in other formats into memsync's
// journals (SPEC §5 `memsync import`) and writes it back out (export.go).
//
// Every format is one file with a parser that turns a source (a directory
// or a file) into Items: journal records without their agent, scope or
// uuid, each with its identity in the source. Import gives each record a
// uuid derived from that identity, so that a second import of the same
// source writes nothing and an edited source writes only what changed, and
// appends the records through journal.Append, the path `memsync append`
// takes (lock, validation, layout). A crash or a cancellation part-way
// leaves whole lines only; the next run skips what is there and writes
// the rest.
//
// The importer never declares an importance (SPEC §3): a source's own
// importance score is left behind; what the source knows about links,
// tiers, verification and supersession is mapped onto links, tier, the
// record's source_verified metadata and supersedes. An import writes no
// feedback: what the source says was confirmed is the source's word, and
// only a flag a person gives through memsync moves importance or earns a
// promotion to shared (SPEC §7, §11).
package importer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/memsync/memsync/journal"
)

// FieldImport is the field every imported record carries: the format it
// came from. With source.context (the item's key for items that have one)
// it finds the previous import of an edited item, which the new version
// supersedes.
const FieldImport = journal.FieldImportedFrom

// FieldSourceVerified and FieldSourceVerifiedBy are the metadata of an
// imported record whose source says it was confirmed (and by whom): kept
// on the record, never a feedback event.
const (
	FieldSourceVerified   = "source_verified"
	FieldSourceVerifiedBy = "source_verified_by"
)

// Item is one memory of a source, as a parser reads it.
type Item struct {
	// Origin is the uuid the item had where it came from (a journal
	// line of `import jsonl`): a record the agent sees with this uuid,
	// or copied from it (FieldOriginUUID), is the item, already there.
	Origin string
	// Replaces are names (Names of other items) this item supersedes,
	// resolved as Links are: kept where the target comes along.
	Replaces []string
	// ContentKey, when set, is what the item says independent of how it
	// was written (ContentKeyObservation, ContentKeyRelation): a record
	// the agent sees with the same key is the item, already there (an
	// export of the agent read back into it writes nothing).
	ContentKey string
	// Private: the item was private where it came from; it stays private
	// whatever Options.Scope says (an import never shares what its
	// source kept to one agent).
	Private bool
	// Owner, when set, is the agent whose record the item was (jsonl): a
	// private item of another agent than the importing one is not
	// imported unless Options.IncludePrivate says so.
	Owner string

	// Key is the item's identity in the source: its own id, or the file
	// that is the memory, or (Keyed false) the file it was found in.
	Key string
	// Keyed says Key names the item whatever its content: an edited item
	// keeps its key, and its new version supersedes the previous import.
	// Without it the item's identity is its file and its content.
	Keyed bool
	// Names are what other items of the source call this one in their
	// links (an observation id, a note title).
	Names []string
	// Record is the memory: Agent, Scope and UUID are set by Import.
	// Source.Context is set to Key (Keyed) or File:Line when empty.
	Record journal.Record
	// Links are names (Names of other items) this item builds on.
	Links []string
	// Verified: the source says the memory was confirmed; Import keeps it
	// as the record's source_verified metadata (no feedback record).
	Verified bool
	// Undated: the source gives no time for the item; Record.TS is a
	// stand-in (the file's modification time) left out of its identity,
	// so that touching the file imports nothing again.
	Undated bool
	// VerifiedBy is who confirmed it, when the source says.
	VerifiedBy string
	// File and Line are where the item starts (File relative to the
	// source's root).
	File string
	Line int
	// Removed: the source says the (keyed) item was deleted; Import
	// retires what earlier imports wrote for it and writes nothing else.
	Removed bool
	// LegacyKey is the key an earlier version of the parser gave the item
	// (unkeyed): a record imported under it counts as this item's, so an
	// upgrade imports nothing again.
	LegacyKey string
}

// Problem is a part of the source that could not be parsed.
type Problem struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Reason) }

// Skip is an item, or a part of one, that was left out, and why.
type Skip struct {
	Source string `json:"source"`
	Reason string `json:"reason"`
}

// Source is what a parser read: the items, what it left out and what it
// could not parse.
type Source struct {
	Items      []*Item
	Skipped    []Skip
	Unparsable []Problem
	// each, when set, takes every item as it is read, instead of Items
	// (an import streams them: plan.go).
	each func(*Item)
}

// add hands one item to each, or keeps it in Items.
func (s *Source) add(it *Item) {
	if s.each != nil {
		s.each(it)
		return
	}
	s.Items = append(s.Items, it)
}

func (s *Source) problem(file string, line int, format string, args ...any) {
	s.Unparsable = append(s.Unparsable, Problem{File: file, Line: line, Reason: fmt.Sprintf(format, args...)})
}

func (s *Source) skip(source, format string, args ...any) {
	s.Skipped = append(s.Skipped, Skip{Source: source, Reason: fmt.Sprintf(format, args...)})
}

// parser reads the source at root (a directory or a file) into out; an
// error only when root cannot be read at all.
type parser func(root string, out *Source) error

// formats maps each format name `memsync import` takes to its parser.
var formats = map[string]parser{
	"openclaw":     parseOpenClaw,
	"vault":        parseVault,
	"tiers":        parseTiers,
	"basic-memory": parseBasicMemory,
	"mcp-memory":   parseMCPMemory,
	"jsonl":        parseJSONL,
	"mem0":         parseMem0,
}

// Formats lists the format names Import takes, sorted.
func Formats() []string {
	names := make([]string, 0, len(formats))
	for n := range formats {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Parse reads the source at path in format.
func Parse(format, path string) (*Source, error) {
	p, ok := formats[format]
	if !ok {
		return nil, fmt.Errorf("unknown format %q (one of %s)", format, strings.Join(Formats(), ", "))
	}
	var src Source
	if err := p(path, &src); err != nil {
		return nil, err
	}
	return &src, nil
}

// Options say where and how Import writes.
type Options struct {
	Format string
	Path   string // the source: a directory or a file
	Agent  string
	Scope  journal.Scope // private when empty
	// SourceType is source.type of every record ("read" when empty): how
	// the agent came to know what the source says.
	SourceType string
	// Root is the memory repository; JournalDir is the agent's journal
	// directory in it, which the records are appended to.
	Root, JournalDir string
	// Journals lists the agent's journal files, archived ones included
	// (memsync.Layout.JournalFiles, the one list of what memsync reads):
	// what is already imported is read from them. Import calls it once it
	// holds LockFile.
	Journals func() ([]string, error)
	// SharedJournals, when set, lists the journal files of the other
	// agents of the repository: their shared records, which the agent
	// sees, are already there for an item with an Origin or a
	// ContentKey (an export of the agent's view, shared memories
	// included, read back into it writes nothing). Read only when the
	// source has such items.
	SharedJournals func() ([]string, error)
	// LockFile is a host-local file Import holds locked for its run, so
	// that two imports for one agent do not both write an item.
	LockFile string
	DryRun   bool
	// NoSync skips the fsync of the written files at the end.
	NoSync bool
	// Now is the clock that refuses records dated more than a day ahead
	// (as `memsync append --ts` does); time.Now when nil.
	Now func() time.Time
	// Prune retires the earlier imports of keyed items of this format
	// that the source no longer holds, wherever they came from (see
	// retirements): for a source that is the whole of what was imported
	// in this format and scope.
	Prune bool
	// IncludePrivate imports items another agent kept private (Item.Owner)
	// too, private to the importing agent: moving an agent under a new
	// name. Without it they are skipped (SkipOthersPrivate): an import
	// never hands one agent what another kept to itself.
	IncludePrivate bool
	// ItemBudget bounds the bytes of source items an import keeps from
	// its first read of the source for its second (plan.go): a source
	// whose items take more is read twice. 0 is DefaultItemBudget; < 0
	// always reads twice.
	ItemBudget int
	// Progress, when set, is called after each record is decided
	// (written or skipped), with how many of total are done.
	Progress func(done, total int)
}

// Report is what one import did.
type Report struct {
	Format     string    `json:"format"`
	Agent      string    `json:"agent"`
	Path       string    `json:"path"`
	DryRun     bool      `json:"dry_run"`
	Imported   int       `json:"imported"`
	Verified   int       `json:"source_verified"` // of Imported, those the source marks verified
	Superseded int       `json:"superseded"`
	Retired    int       `json:"retired"` // earlier imports of items removed from the source
	Skipped    []Skip    `json:"skipped"`
	Unparsable []Problem `json:"unparsable"`
	Unresolved []Skip    `json:"unresolved_links"`
	Files      []string  `json:"files"` // journal files written, relative to Root
}

// SkipAlreadyImported is the reason of an item whose record is in the
// journal already.
const SkipAlreadyImported = "already imported"

// SkipOthersPrivate is the reason of an item private to another agent,
// left out without Options.IncludePrivate.
const SkipOthersPrivate = "private to another agent: not imported (--include-private moves it, private to the importing agent)"

// planned is one record to write.
type planned struct {
	rec    journal.Record
	suffix string // the uuid's identity part, h<16 hex>
	source string // for the report
	ok     bool   // not already in the journal
}

// Import reads the source and appends its records to the agent's journal,
// skipping those already there. It reads the source for the plan, then
// writes each record as it reads the source again (plan.go: a source
// whose items fit in Options.ItemBudget is read once). It stops at
// the first record it cannot write, or when ctx is done, with every line
// written so far whole: a re-run completes the import.
func Import(ctx context.Context, opts Options) (*Report, error) {
	if opts.Scope == "" {
		opts.Scope = journal.ScopePrivate
	}
	if opts.SourceType == "" {
		opts.SourceType = "read"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	parse, ok := formats[opts.Format]
	if !ok {
		return nil, fmt.Errorf("unknown format %q (one of %s)", opts.Format, strings.Join(Formats(), ", "))
	}
	rep := &Report{Format: opts.Format, Agent: opts.Agent, Path: opts.Path, DryRun: opts.DryRun}
	if !opts.DryRun && opts.LockFile != "" {
		unlock, err := lockFile(opts.LockFile)
		if err != nil {
			return nil, err
		}
		defer unlock()
	}
	var files []string
	var err error
	if opts.Journals != nil {
		if files, err = opts.Journals(); err != nil {
			return nil, fmt.Errorf("import: %w", err)
		}
	}
	have, err := scanJournal(files, opts.Format)
	if err != nil {
		return nil, err
	}
	// The first read: the plan.
	pl := newPlanner(opts, have, rep)
	first := Source{each: pl.first}
	if err := parse(opts.Path, &first); err != nil {
		return nil, err
	}
	rep.Skipped = append(first.Skipped, rep.Skipped...)
	rep.Unparsable = append(first.Unparsable, rep.Unparsable...)
	pl.flush()
	if err := scanRoundTrip(have, pl.wantsShared, pl.wantsContent, files, opts); err != nil {
		return nil, err
	}
	pl.resolve()
	present, groups, gone := pl.stillThere()
	clean := len(rep.Unparsable) == 0
	retire := retirements(opts, have, present, groups, gone, rep)
	// The second read: each record written as it comes.
	w := &writer{ctx: ctx, opts: opts, rep: rep, written: map[string]bool{}, total: pl.todo + len(retire)}
	n := 0
	second := Source{each: func(it *Item) {
		i := n
		n++
		if w.err != nil {
			return
		}
		p, ok, err := pl.build(i, it)
		switch {
		case err != nil:
			w.err = err
		case ok:
			w.decide(&p)
		}
	}}
	if pl.reread {
		err = parse(opts.Path, &second)
	} else {
		kept := pl.kept
		pl.kept = nil
		for i, it := range kept {
			kept[i] = nil // decided: what it held can go
			second.add(it)
		}
	}
	if err == nil && w.err == nil && n != len(pl.sks) {
		w.err = fmt.Errorf("%s: %w", opts.Path, errSourceChanged)
	}
	if err == nil && w.err == nil {
		if clean && len(rep.Unparsable) > 0 && opts.Prune {
			// A record the second read found invalid: not pruned after all.
			retire = retirements(opts, have, present, groups, gone, rep)
		}
		for _, p := range retire {
			if w.decide(&p); w.err != nil {
				break
			}
		}
	}
	if err == nil {
		err = w.err
	}
	if err != nil {
		// What was written stays, durable: the re-run skips it.
		if !opts.NoSync && len(w.written) > 0 {
			_ = syncAll(opts.JournalDir, w.written)
		}
		return rep, err
	}
	sort.Strings(rep.Files)
	if !opts.NoSync && len(w.written) > 0 {
		if err := syncAll(opts.JournalDir, w.written); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// writer appends the planned records as they are decided, noting the
// files written; after its first error (or once ctx is done) it writes
// nothing more.
type writer struct {
	ctx     context.Context
	opts    Options
	rep     *Report
	written map[string]bool
	done    int
	total   int
	err     error
}

// decide writes p unless it is in the journal already (or the import is
// a dry run), and counts it.
func (w *writer) decide(p *planned) {
	opts, rep := w.opts, w.rep
	if err := w.ctx.Err(); err != nil {
		w.err = fmt.Errorf("import cancelled after %d of %d records: %w", w.done, w.total, err)
		return
	}
	switch {
	case !p.ok:
		rep.Skipped = append(rep.Skipped, Skip{Source: p.source, Reason: SkipAlreadyImported})
	case opts.DryRun:
		count(rep, &p.rec)
	default:
		path, err := journal.Append(opts.JournalDir, &p.rec, journal.AppendOptions{NoSync: true, Root: opts.Root})
		if err != nil {
			w.err = fmt.Errorf("import %s: %w", p.source, err)
			return
		}
		count(rep, &p.rec)
		if !w.written[path] {
			w.written[path] = true
			rel, _ := filepath.Rel(opts.Root, path)
			rep.Files = append(rep.Files, filepath.ToSlash(rel))
		}
	}
	w.done++
	if opts.Progress != nil {
		opts.Progress(w.done, max(w.total, w.done))
	}
}

func count(rep *Report, r *journal.Record) {
	if isRemoval(r) {
		rep.Retired += len(r.Supersedes)
		return
	}
	rep.Imported++
	if string(r.Extra[FieldSourceVerified]) == "true" {
		rep.Verified++
	}
	rep.Superseded += len(r.Supersedes)
}

// existing is what the agent's journal already holds that Import needs.
type existing struct {
	rt       seenCopies          // what items with an Origin or a ContentKey find (roundtrip.go)
	suffixes map[string]string   // the h<16 hex> part of every derived uuid → the uuid
	byKey    map[string][]string // source.context of this format's records → uuids
	retired  map[string]bool     // uuids some record supersedes
	ts       map[string]time.Time
	scope    map[string]journal.Scope // of the records in byKey
	// retiredBy is the scope of a record superseding each retired uuid.
	retiredBy map[string]journal.Scope
	removal   map[string]bool // records in byKey that retire a removed item
	// text is the textHash of the records in byKey with a place key
	// (places.go).
	text map[string]uint64
}

// scanJournal reads every line of files (a line that does not parse is
// the daemon's business, not the importer's).
func scanJournal(files []string, format string) (*existing, error) {
	ex := &existing{suffixes: map[string]string{}, byKey: map[string][]string{}, retired: map[string]bool{}, ts: map[string]time.Time{},
		scope: map[string]journal.Scope{}, removal: map[string]bool{}, retiredBy: map[string]journal.Scope{},
		text: map[string]uint64{}}
	fw, follows := followed[format]
	imported := []byte(quote(format))
	for _, f := range files {
		// Line by line: the index is what is kept, never a file.
		err := journal.EachLine(f, func(l journal.Line) error {
			if l.Err != nil {
				return nil
			}
			r := &l.Record
			// A parsed record's strings share its line: what the index
			// keeps is copied, so that it holds no line.
			uuid := strings.Clone(r.UUID)
			if s := derivedSuffix(uuid); s != "" {
				ex.suffixes[s] = uuid
			}
			for _, id := range r.Supersedes {
				id = strings.Clone(id)
				ex.retired[id] = true
				ex.retiredBy[id] = r.Scope
			}
			if bytes.Equal(r.Extra[FieldImport], imported) && r.Source != nil && r.Source.Context != "" {
				key := r.Source.Context
				if _, ok := ex.byKey[key]; !ok {
					key = strings.Clone(key)
				}
				ex.byKey[key] = append(ex.byKey[key], uuid)
				ex.ts[uuid] = r.TS
				ex.scope[uuid] = r.Scope
				if isRemoval(r) {
					ex.removal[uuid] = true
				}
				if follows {
					if _, _, ok := placeOf(fw, key); ok {
						ex.text[uuid] = textHash(r.Text)
					}
				}
			}
			return nil
		})
		if err != nil && !errors.Is(err, os.ErrNotExist) { // ErrNotExist: compacted away since it was listed
			return nil, fmt.Errorf("import: read %s: %w", f, err)
		}
	}
	return ex, nil
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// derivedSuffix is the h<16 hex> part of a uuid of the derived form
// mem_<ts>_<agent>_h<16 hex>, "" for any other uuid.
func derivedSuffix(uuid string) string {
	cut := strings.LastIndexByte(uuid, '_')
	if cut < 0 || len(uuid)-cut-1 != 17 || uuid[cut+1] != 'h' || !strings.HasPrefix(uuid, "mem_") {
		return ""
	}
	return uuid[cut+1:]
}

// identity is the h<16 hex> uuid part of an item: the format, its key,
// the scope and a digest of what the source says of it (for an unkeyed
// item, the key is its file and the digest its content).
func identity(format, key string, scope journal.Scope, digest string) string {
	sum := sha256.Sum256([]byte("import\x00" + format + "\x00" + key + "\x00" + string(scope) + "\x00" + digest))
	return "h" + hex.EncodeToString(sum[:8])
}

// digest is what the source says of an item, independent of where in its
// file it sits and of the agent it is imported for.
func digest(it *Item) string {
	r := it.Record
	var b strings.Builder
	ts := r.TS.UTC().Format(time.RFC3339Nano)
	if it.Undated {
		ts = ""
	}
	for _, s := range []string{ts, string(r.Kind), r.Text, r.Tier, r.MaxAge, r.Confidence, r.Why,
		strings.Join(r.Tags, "\x01"), strings.Join(r.Entities, "\x01"), strings.Join(it.Links, "\x01"), fmt.Sprint(it.Verified)} {
		b.WriteString(s)
		b.WriteByte(0)
	}
	if r.Source != nil {
		b.WriteString(r.Source.Actor)
	}
	return b.String()
}

// lockFile holds path's flock until the returned function is called.
func lockFile(path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("import: lock: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("import: lock: %w", err)
	}
	if err := journal.Flock(f, syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("import: lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}

// syncAll fsyncs the files written and their directory.
func syncAll(dir string, files map[string]bool) error {
	for path := range files {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("import: fsync %s: %w", path, err)
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return fmt.Errorf("import: fsync %s: %w", path, err)
		}
	}
	if err := journal.SyncDir(dir); err != nil {
		return fmt.Errorf("import: fsync %s: %w", dir, err)
	}
	return nil
}
