package compaction

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/memsync/memsync/journal"
)

// EntityPageRecords bounds how many records an entity page lists.
const EntityPageRecords = 20

// subjectWords is how many leading words of a text make its subject when a
// record names no entity and no tag.
const subjectWords = 4

// Subject is what a decision or preference is about, as a key and as shown:
// the record's first entity, else its first tag, else the first few words of
// its text, lowercased, without punctuation. Two decisions with the same
// subject and kind: the later one wins.
func Subject(r *journal.Record) (key, display string) {
	if ents := r.AllEntities(); len(ents) > 0 {
		return "entity:" + strings.ToLower(strings.TrimLeft(ents[0], "@#")), ents[0]
	}
	for _, t := range r.Tags {
		if t = strings.TrimSpace(t); t != "" {
			return "tag:" + strings.ToLower(strings.TrimLeft(t, "#")), "#" + strings.TrimLeft(t, "#")
		}
	}
	words := strings.FieldsFunc(strings.ToLower(r.Text), func(c rune) bool {
		return !unicode.IsLetter(c) && !unicode.IsNumber(c)
	})
	if len(words) > subjectWords {
		words = words[:subjectWords]
	}
	s := strings.Join(words, " ")
	if s == "" {
		s = "(untitled)"
	}
	return "words:" + s, s
}

// Slug is an entity's page name: lowercase letters and digits with dashes
// between words, sigils dropped ("@Shaun" → "shaun", "Acme Corp" →
// "acme-corp"). A name with neither letters nor digits gets a hash.
func Slug(name string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(name) {
		if unicode.IsLetter(c) || unicode.IsNumber(c) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(c)
		} else {
			dash = true
		}
		if b.Len() >= 80 {
			break
		}
	}
	if b.Len() == 0 {
		sum := sha256.Sum256([]byte(name))
		return "entity-" + hex.EncodeToString(sum[:4])
	}
	return b.String()
}

// entry is a record as the generated sections show it.
type entry struct {
	uuid    string
	kind    journal.Kind
	ts      time.Time
	text    string
	why     string
	subject string // display form
	with    []string
}

func newEntry(r *journal.Record) *entry {
	_, subj := Subject(r)
	return &entry{uuid: r.UUID, kind: r.Kind, ts: r.TS, text: shortText(r.Text, 400), why: shortText(r.Why, 200),
		subject: subj, with: r.ConflictsWith}
}

func newer(a, b *entry) bool {
	if !a.ts.Equal(b.ts) {
		return a.ts.After(b.ts)
	}
	return a.uuid > b.uuid
}

type entityFold struct {
	names   map[string]bool
	total   int      // archived records mentioning it
	current []*entry // newest first, at most EntityPageRecords
	more    int      // current records beyond those listed
}

// fold is what the archive says, reduced to what the generated sections show.
type fold struct {
	records     int
	first, last time.Time
	byKind      map[journal.Kind]int
	superseded  map[string][]string // uuid -> groups of the agent's records superseding it
	decisions   map[string]*entry   // by subject key
	preferences map[string]*entry
	conflicts   []*entry
	targets     map[string]*entry // conflict targets by uuid
	entities    map[string]*entityFold
}

// foldArchive reads every archive file of the agent twice: once for the
// uuids that later records supersede and the targets of conflicts, once to
// keep, per subject, the latest decision and preference that is not
// superseded, every live conflict, and each entity's latest records. Memory
// grows with subjects, conflicts, entities and supersede links, and with
// the largest archive file, not with the whole archive.
func foldArchive(l journal.Layout, archiveDir, agent string) (*fold, error) {
	files, err := archiveFiles(l, archiveDir)
	if err != nil {
		return nil, err
	}
	f := &fold{byKind: map[journal.Kind]int{}, superseded: map[string][]string{}, decisions: map[string]*entry{},
		preferences: map[string]*entry{}, targets: map[string]*entry{}, entities: map[string]*entityFold{}}
	for _, path := range files {
		err := eachLine(path, func(l journal.Line) error {
			if l.Err != nil || l.Record.Agent != agent {
				return nil
			}
			for _, id := range l.Record.Supersedes {
				f.superseded[id] = append(f.superseded[id], l.Record.GroupID())
			}
			for _, id := range l.Record.ConflictsWith {
				f.targets[id] = nil
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for _, path := range files {
		// A record version appears once per archive file (compaction
		// never copies a line twice into one); a person's duplicate
		// would count once too. Per file, so memory stays bounded.
		seen := map[string]bool{}
		err := eachLine(path, func(l journal.Line) error {
			if l.Err != nil || l.Record.Agent != agent {
				return nil
			}
			r := &l.Record
			if k := recordKey(r); seen[k] {
				return nil
			} else {
				seen[k] = true
			}
			f.add(r)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return f, nil
}

func (f *fold) add(r *journal.Record) {
	f.records++
	f.byKind[r.Kind]++
	if f.first.IsZero() || r.TS.Before(f.first) {
		f.first = r.TS
	}
	if r.TS.After(f.last) {
		f.last = r.TS
	}
	if _, ok := f.targets[r.UUID]; ok {
		f.targets[r.UUID] = newEntry(r)
	}
	current := !f.retired(r)
	for _, name := range r.AllEntities() {
		slug := Slug(name)
		ef := f.entities[slug]
		if ef == nil {
			ef = &entityFold{names: map[string]bool{}}
			f.entities[slug] = ef
		}
		ef.names[name] = true
		ef.total++
		if current {
			ef.current = append(ef.current, newEntry(r))
			sort.Slice(ef.current, func(i, j int) bool { return newer(ef.current[i], ef.current[j]) })
			if len(ef.current) > EntityPageRecords {
				ef.current = ef.current[:EntityPageRecords]
				ef.more++
			}
		}
	}
	if !current {
		return
	}
	if r.Kind == journal.KindConflict || len(r.ConflictsWith) > 0 {
		f.conflicts = append(f.conflicts, newEntry(r))
	}
	var latest map[string]*entry
	switch r.Kind {
	case journal.KindDecision:
		latest = f.decisions
	case journal.KindPreference:
		latest = f.preferences
	default:
		return
	}
	key, _ := Subject(r)
	if e := newEntry(r); latest[key] == nil || newer(e, latest[key]) {
		latest[key] = e
	}
}

// archiveFiles lists the archive's day files in name (date) order, as the
// engine reads them (journal.Layout.DayFiles).
func archiveFiles(l journal.Layout, dir string) ([]string, error) {
	files, _, err := l.DayFiles(dir)
	return files, err
}

// md makes text safe inside a generated section: on one line, and unable
// to close an HTML comment or open a marker.
func md(s string) string {
	s = strings.ReplaceAll(s, "<!--", "&lt;!--")
	return strings.ReplaceAll(s, "-->", "--&gt;")
}

func day(t time.Time) string { return t.UTC().Format("2006-01-02") }

// memoryBody is the deterministic text of MEMORY.md's generated section.
func (f *fold) memoryBody() string {
	var b strings.Builder
	b.WriteString("## Compacted memory\n\n")
	if f.records == 0 {
		b.WriteString("Nothing has been compacted yet.\n")
		return b.String()
	}
	fmt.Fprintf(&b, "Folded from %d archived records, %s to %s, by `memsync compact`. "+
		"Superseded records are left out here; `journal/archive/` keeps every one.\n", f.records, day(f.first), day(f.last))
	list := func(title string, m map[string]*entry) {
		if len(m) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n### %s\n\n", title)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			e := m[k]
			fmt.Fprintf(&b, "- **%s**: %s", md(e.subject), md(e.text))
			if e.why != "" {
				fmt.Fprintf(&b, " _Why: %s_", md(e.why))
			}
			fmt.Fprintf(&b, " (%s, `%s`)\n", day(e.ts), e.uuid)
		}
	}
	list("Decisions (latest per subject)", f.decisions)
	list("Preferences (latest per subject)", f.preferences)
	if len(f.conflicts) > 0 {
		b.WriteString("\n### Conflicts\n\n")
		cs := append([]*entry(nil), f.conflicts...)
		sort.Slice(cs, func(i, j int) bool { return newer(cs[i], cs[j]) })
		for _, e := range cs {
			fmt.Fprintf(&b, "- %s (%s, `%s`)", md(e.text), day(e.ts), e.uuid)
			for _, id := range e.with {
				if t := f.targets[id]; t != nil {
					fmt.Fprintf(&b, "; conflicts with: %s (`%s`)", md(t.text), id)
				} else {
					fmt.Fprintf(&b, "; conflicts with `%s`", id)
				}
			}
			b.WriteString("\n")
		}
	}
	b.WriteString("\n### Archived records by kind\n\n")
	kinds := make([]string, 0, len(f.byKind))
	for k := range f.byKind {
		kinds = append(kinds, string(k))
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(&b, "- %s: %d\n", k, f.byKind[journal.Kind(k)])
	}
	return b.String()
}

// entityTitle is the name a new entity page is titled with.
func (ef *entityFold) title() string {
	names := make([]string, 0, len(ef.names))
	for n := range ef.names {
		names = append(names, n)
	}
	sort.Strings(names)
	return names[0]
}

// entityBody is the deterministic text of an entity page's generated section.
func (ef *entityFold) body() string {
	var b strings.Builder
	b.WriteString("## From compacted memory\n\n")
	names := make([]string, 0, len(ef.names))
	for n := range ef.names {
		names = append(names, md(n))
	}
	sort.Strings(names)
	fmt.Fprintf(&b, "Mentioned (as %s) by %d archived records. ", strings.Join(names, ", "), ef.total)
	if len(ef.current) == 0 {
		b.WriteString("Every one of them has been superseded.\n")
		return b.String()
	}
	fmt.Fprintf(&b, "The latest current ones, newest first:\n\n")
	for _, e := range ef.current {
		fmt.Fprintf(&b, "- %s %s: %s (`%s`)\n", day(e.ts), e.kind, md(e.text), e.uuid)
	}
	if ef.more > 0 {
		fmt.Fprintf(&b, "\n…and %d more in `journal/archive/`.\n", ef.more)
	}
	return b.String()
}

// retired reports whether one of the agent's records supersedes r and,
// by journal.Retires (as in the graph), retires it: a private record
// retires only the agent's private memories.
func (f *fold) retired(r *journal.Record) bool {
	for _, src := range f.superseded[r.UUID] {
		if journal.Retires(r.Agent, src, r.GroupID()) {
			return true
		}
	}
	return false
}
