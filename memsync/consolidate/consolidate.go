// Package consolidate is SPEC §10's consolidation cycle for one agent:
// four steps over its journals, each action journaled as a record of
// memsync's own (its consolidation field names the action) with a
// deterministic uuid, so that running it twice changes nothing the second
// time and a rebuild replays the same result.
//
//  1. promote: a topic (entity or tag) that recurs in 3+ of the agent's
//     current learning records (duplicates counted once) becomes a summary
//     record linking them (a newer summary of the same topic supersedes the
//     older); a procedure referenced by 3+ later records is proposed for
//     the core tier;
//  2. prune: learning records that duplicate an older one, and learning
//     records already superseded or archived (decayed, low confidence and
//     unreferenced for 7 days, flagged wrong), are archived by a prune
//     record naming them (score.Evaluate reads it: archived until a new
//     reference revives them);
//  3. verify: a core memory that a newer record contradicts (conflicts_with,
//     or the gate's contradiction rule: similar text, negation flipped) is
//     listed for review (score.Evaluate: status review until verified);
//  4. outcome check: a decision older than a week with no outcome
//     (score.AwaitingOutcome) gets a follow-up record and is listed.
//
// Every field of an action's record is a function of what its uuid is
// derived from, never of the run's clock, so that two hosts that derive
// the same action (a laptop offline, the server) write the same line byte
// for byte, and git's union merge leaves a repeat, not a uuid clash (SPEC
// §12). Its ts is: for a theme, the newest ts among the records it links
// and the summaries it supersedes; for a core proposal, the procedure's;
// for a prune, one microsecond after its newest target's; for a verify,
// the newer (contradicting) record's; for a follow-up, the decision's ts
// plus score.FollowUpAfter. Counts that grow with time stay out of the
// text (MEMORY.md shows them), and what can differ between hosts (the
// summaries a theme replaces, why each pruned record goes) is part of the
// uuid's key.
//
// Then MEMORY.md's consolidation section is rewritten from what the
// journals now hold. The cycle needs no graph: it reads every agent's
// journals and archives (references from other agents count), computes
// with score.Evaluate at the clock, and appends with journal.Append
// (IfAbsent). A crash between two steps, or between two records, loses
// nothing: what was written is found by its uuid at the next run, which
// finishes the rest. It holds the agent's compaction lock while it runs.
package consolidate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/memsync/memsync/compaction"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/score"
	"github.com/memsync/memsync/memsync/surprise"
)

// The steps, in the order they run.
const (
	StepPromote = "promote"
	StepPrune   = "prune"
	StepVerify  = "verify"
	StepOutcome = "outcome"
	StepPage    = "page" // MEMORY.md's section, after the four
)

// Thresholds of SPEC §10.
const (
	ThemeAt     = 3   // records of a topic that make a theme
	ProposeAt   = 3   // references that make a procedure a core candidate
	pruneChunk  = 500 // targets per prune record
	themeListed = 10  // texts a theme summary quotes
)

// Options configure one run for one agent.
type Options struct {
	Root   string
	Agent  string
	DryRun bool // compute and report; write nothing
	NoSync bool // do not fsync appended records
	Now    func() time.Time
	Logger *zap.Logger
	// Hook, when set, runs before each step (StepPromote … StepPage); an
	// error stops the run there, as a crash would (tests inject them).
	Hook func(step string) error
}

// Action is one record the run journaled (or, in a dry run, would have).
type Action struct {
	Step    string   `json:"step"`
	Action  string   `json:"action"`
	UUID    string   `json:"uuid"`
	Targets []string `json:"targets"`
	Text    string   `json:"text"`
}

// FollowUp is a decision still waiting for its outcome.
type FollowUp struct {
	Decision string `json:"decision"`
	Question string `json:"question"`
}

// Review is a core memory contradicted by a newer record, until a human
// verifies it again.
type Review struct {
	Core  string `json:"core"`
	Newer string `json:"newer"`
	Text  string `json:"text"`
}

// Report is what a run did and what stays open.
type Report struct {
	Agent     string     `json:"agent"`
	DryRun    bool       `json:"dry_run"`
	Records   int        `json:"records"` // the agent's records read
	Actions   []Action   `json:"actions"`
	FollowUps []FollowUp `json:"follow_ups"`
	Review    []Review   `json:"review"`
	Page      bool       `json:"memory_md_changed"`
}

// ErrBusy means the agent's compaction or consolidation is running.
var ErrBusy = compaction.ErrBusy

// Run runs the cycle for opts.Agent.
func Run(ctx context.Context, opts Options) (Report, error) {
	rep := Report{Agent: opts.Agent, DryRun: opts.DryRun, Actions: []Action{}, FollowUps: []FollowUp{}, Review: []Review{}}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if !opts.DryRun {
		unlock, err := compaction.Lock(opts.Root, opts.Agent)
		if errors.Is(err, ErrBusy) {
			return rep, fmt.Errorf("consolidate %s: its compaction or consolidation is running (%w); try again later", opts.Agent, err)
		}
		if err != nil {
			return rep, fmt.Errorf("consolidate %s: %w", opts.Agent, err)
		}
		defer unlock()
	}
	c := &cycle{opts: opts, layout: memsync.Layout{Root: opts.Root}, now: opts.Now().UTC(), rep: &rep}
	if err := c.load(ctx); err != nil {
		return rep, fmt.Errorf("consolidate %s: %w", opts.Agent, err)
	}
	rep.Records = len(c.order)
	for _, s := range []struct {
		name string
		run  func() error
	}{{StepPromote, c.promote}, {StepPrune, c.prune}, {StepVerify, c.verify}, {StepOutcome, c.outcome}, {StepPage, c.page}} {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		if opts.Hook != nil {
			if err := opts.Hook(s.name); err != nil {
				return rep, fmt.Errorf("consolidate %s: before %s: %w", opts.Agent, s.name, err)
			}
		}
		if err := s.run(); err != nil {
			return rep, fmt.Errorf("consolidate %s: %s: %w", opts.Agent, s.name, err)
		}
	}
	return rep, nil
}

// memo is one of the agent's records with what names it.
type memo struct {
	rec          journal.Record
	supersededAt time.Time
	replacedBy   string
	events       []score.Event
	conflicts    []source // newer records the agent may see naming it in conflicts_with
	words        *surprise.Words
	res          *score.Result // Evaluate at the clock, until a signal changes it
}

type source struct {
	uuid string
	ts   time.Time
}

type cycle struct {
	opts   Options
	layout memsync.Layout
	now    time.Time
	rep    *Report
	mems   map[string]*memo // the agent's records by uuid
	order  []*memo          // in (ts, uuid) order
	exists map[string]bool  // every uuid in any journal
}

func (m *memo) memory() score.Memory { return score.FromRecord(&m.rec, m.supersededAt, m.replacedBy) }

func (c *cycle) eval(m *memo) score.Result {
	if m.res == nil {
		r := score.Evaluate(m.memory(), m.events, c.now)
		m.res = &r
	}
	return *m.res
}

func (m *memo) textWords() surprise.Words {
	if m.words == nil {
		w := surprise.TextWords(m.rec.Text)
		m.words = &w
	}
	return *m.words
}

// own reports whether m is a record the steps may act on: not one of
// memsync's own.
func (m *memo) own() bool {
	return !m.rec.Kind.Memsync() && m.rec.Consolidation() == ""
}

// load reads the agent's records, then every record of every agent for
// the signals that name them.
func (c *cycle) load(ctx context.Context) error {
	c.mems, c.exists = map[string]*memo{}, map[string]bool{}
	if err := c.eachRecord(ctx, c.opts.Agent, func(r *journal.Record) {
		if _, ok := c.mems[r.UUID]; !ok {
			m := &memo{rec: *r}
			c.mems[r.UUID] = m
			c.order = append(c.order, m)
		}
	}); err != nil {
		return err
	}
	slices.SortFunc(c.order, func(a, b *memo) int {
		if x := a.rec.TS.Compare(b.rec.TS); x != 0 {
			return x
		}
		return strings.Compare(a.rec.UUID, b.rec.UUID)
	})
	agents, err := c.layout.Agents()
	if err != nil {
		return err
	}
	for _, a := range agents {
		if a == c.opts.Agent {
			for _, m := range c.order {
				c.signal(&m.rec)
			}
			continue
		}
		if err := c.eachRecord(ctx, a, c.signal); err != nil {
			return err
		}
	}
	return nil
}

// eachRecord calls fn with every valid record of agent's archive and
// journal, each uuid as first written.
func (c *cycle) eachRecord(ctx context.Context, agent string, fn func(*journal.Record)) error {
	files, err := c.layout.JournalFiles(agent)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, path := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		f, err := journal.OpenNoFollow(path, os.O_RDONLY, 0)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return err
		}
		rd := journal.NewReader(f, 0, 0)
		for {
			l, err := rd.Next()
			if err != nil {
				f.Close()
				if errors.Is(err, io.EOF) {
					break
				}
				return fmt.Errorf("read %s: %w", path, err)
			}
			if l.Err != nil || journal.CheckOwner(&l.Record, agent) != nil || seen[l.Record.UUID] {
				continue
			}
			seen[l.Record.UUID] = true
			c.exists[l.Record.UUID] = true
			fn(&l.Record)
		}
	}
	return nil
}

// signal records what r says of the agent's records.
func (c *cycle) signal(r *journal.Record) {
	c.exists[r.UUID] = true
	visible := r.Agent == c.opts.Agent || r.Scope == journal.ScopeShared
	add := func(rel score.Relation, ids []string) {
		for _, id := range ids {
			// A record that cannot see the memory signals nothing to it
			// (journal.Sees): no use, no contradiction to review.
			if m := c.mems[id]; m != nil && id != r.UUID && journal.Sees(r.Agent, m.rec.GroupID()) {
				m.events = append(m.events, score.EventFrom(rel, r))
				m.res = nil
				if rel == score.ConflictsWith && visible {
					m.conflicts = append(m.conflicts, source{r.UUID, r.TS})
				}
			}
		}
	}
	add(score.Links, r.Links)
	add(score.Supports, r.Supports())
	add(score.ConflictsWith, r.ConflictsWith)
	for _, id := range r.Supersedes {
		m := c.mems[id]
		if m == nil || id == r.UUID || !journal.Retires(r.Agent, r.GroupID(), m.rec.GroupID()) {
			continue
		}
		if journal.RetiresFirst(r.TS, r.UUID, m.supersededAt, m.replacedBy) {
			m.supersededAt, m.replacedBy, m.res = r.TS, r.UUID, nil
		}
	}
}

// RecordUUID is the uuid of the consolidation record of action over key:
// the same for every run that derives it (journal.ConsolidationUUID; the
// journal reads each action's key back from its record to accept the uuid
// only where the cycle writes it, so a key changed here must change there).
func RecordUUID(action string, key ...string) string {
	return journal.ConsolidationUUID(action, key...)
}

// write journals rec (unless it exists already or this is a dry run),
// applies it to the model and reports it. rec carries its uuid, kind,
// text, links and ts, each a function of what the uuid is derived from
// (never of the run's clock or of records outside that key): two hosts
// that derive the same action write the same line, byte for byte, and
// after git's union merge the repeat is a no-op, not a clash.
func (c *cycle) write(step string, rec journal.Record, targets []string) error {
	if c.exists[rec.UUID] {
		return nil
	}
	if rec.TS.IsZero() {
		return fmt.Errorf("consolidation record %s has no ts", rec.UUID)
	}
	rec.TS, rec.Agent, rec.Scope = rec.TS.UTC(), c.opts.Agent, journal.ScopePrivate
	rec.Source = &journal.Source{Type: "inferred", Actor: "memsync", Context: "consolidation: " + step}
	if !c.opts.DryRun {
		_, err := journal.Append(c.layout.JournalDir(c.opts.Agent), &rec, journal.AppendOptions{NoSync: c.opts.NoSync, IfAbsent: true, Root: c.layout.Root})
		if err != nil && !errors.Is(err, journal.ErrExists) {
			return fmt.Errorf("journal %s: %w", rec.UUID, err)
		}
		c.opts.Logger.Info("consolidation", zap.String("agent", c.opts.Agent), zap.String("step", step),
			zap.String("uuid", rec.UUID), zap.Int("targets", len(targets)))
	}
	c.exists[rec.UUID] = true
	m := &memo{rec: rec}
	c.mems[rec.UUID] = m
	c.order = append(c.order, m)
	c.signal(&rec)
	c.rep.Actions = append(c.rep.Actions, Action{Step: step, Action: rec.Consolidation(), UUID: rec.UUID, Targets: targets, Text: rec.Text})
	return nil
}

func extra(fields map[string]any) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	for k, v := range fields {
		b, _ := json.Marshal(v)
		out[k] = b
	}
	return out
}

// topicKey is how a topic is compared: lower case, without @ or #.
func topicKey(name string) string {
	return strings.ToLower(strings.TrimLeft(strings.TrimSpace(name), "@#"))
}

// current lists the agent's own learning records that are not hidden at
// the clock, duplicates of an older one left out.
func (c *cycle) current() []*memo {
	var out []*memo
	byWords := map[uint64][]*memo{}
	for _, m := range c.order {
		if !m.own() || m.rec.Tier != "learning" || c.eval(m).Status.Hidden() {
			continue
		}
		if c.duplicateOf(m, byWords) != nil {
			continue
		}
		out = append(out, m)
	}
	return out
}

// duplicateOf is the older record m duplicates among those seen so far
// (registering m when it duplicates none).
func (c *cycle) duplicateOf(m *memo, byWords map[uint64][]*memo) *memo {
	w := m.textWords()
	if len(w.Hashes) == 0 {
		return nil
	}
	key := uint64(len(w.Hashes))
	for _, h := range w.Hashes {
		key = key*1099511628211 ^ h
	}
	for _, o := range byWords[key] {
		if surprise.Duplicates(o.textWords(), w) {
			return o
		}
	}
	byWords[key] = append(byWords[key], m)
	return nil
}

func (c *cycle) promote() error {
	// Themes: topics of current learning records.
	members := map[string][]*memo{}
	display := map[string]string{}
	for _, m := range c.current() {
		seen := map[string]bool{}
		for _, name := range append(m.rec.AllEntities(), m.rec.Tags...) {
			k := topicKey(name)
			if k == "" || seen[k] {
				continue
			}
			seen[k] = true
			members[k] = append(members[k], m)
			if _, ok := display[k]; !ok {
				display[k] = name
			}
		}
	}
	topics := make([]string, 0, len(members))
	for k, ms := range members {
		if len(ms) >= ThemeAt {
			topics = append(topics, k)
		}
	}
	slices.Sort(topics)
	themes := map[string][]string{} // topic -> its current theme summaries
	for _, m := range c.order {
		if m.rec.Consolidation() == journal.ConsolidationTheme && m.supersededAt.IsZero() {
			k := extraString(&m.rec, "topic")
			themes[k] = append(themes[k], m.rec.UUID)
		}
	}
	for _, k := range topics {
		ms := members[k]
		ids := make([]string, len(ms))
		for i, m := range ms {
			ids[i] = m.rec.UUID
		}
		slices.Sort(ids)
		older := slices.Sorted(slices.Values(themes[k]))
		if len(older) == 1 && slices.Equal(c.mems[older[0]].rec.Links, ids) {
			continue // the current summary is this one
		}
		var quotes []string
		ts := time.Time{}
		for i := len(ms) - 1; i >= 0; i-- {
			if len(quotes) < themeListed {
				quotes = append(quotes, short(ms[i].rec.Text, 160))
			}
			ts = latest(ts, ms[i].rec.TS)
		}
		for _, id := range older {
			ts = latest(ts, c.mems[id].rec.TS)
		}
		text := fmt.Sprintf("Recurring topic %s in %d learning records: %s", display[k], len(ms), strings.Join(quotes, " | "))
		// The summaries it replaces are part of its key, as they are of
		// its content: a host that had not seen an older summary derives
		// another record, never the same uuid with other supersedes. Two
		// current summaries of one topic (one from each host, after a
		// merge) are replaced by one that both hosts derive alike.
		key := append([]string{c.opts.Agent, k}, ids...)
		if len(older) > 0 {
			key = append(append(key, "\x00supersedes"), older...)
		}
		rec := journal.Record{UUID: RecordUUID(journal.ConsolidationTheme, key...), TS: ts, Kind: journal.KindSummary, Text: text,
			Links: ids, Supersedes: older, Tags: []string{display[k]},
			Extra: extra(map[string]any{journal.FieldConsolidation: journal.ConsolidationTheme, "topic": k})}
		if err := c.write(StepPromote, rec, ids); err != nil {
			return err
		}
	}
	// Procedures used 3+ times: proposed for the core tier.
	for _, m := range slices.Clone(c.order) {
		if !m.own() || m.rec.Kind != journal.KindProcedure || m.rec.Tier == "core" || c.eval(m).Status.Hidden() {
			continue
		}
		if c.uses(m) < ProposeAt {
			continue
		}
		// How often it was used differs from host to host and grows: the
		// record says only that it passed the threshold (MEMORY.md's
		// section counts the uses as they stand). Its ts is the
		// procedure's.
		rec := journal.Record{UUID: RecordUUID(journal.ConsolidationCore, m.rec.UUID), TS: m.rec.TS, Kind: journal.KindFeedback,
			Text:  fmt.Sprintf("Proposed for the core tier (used %d or more times): %s", ProposeAt, short(m.rec.Text, 300)),
			Links: []string{m.rec.UUID}, Extra: extra(map[string]any{journal.FieldConsolidation: journal.ConsolidationCore})}
		if err := c.write(StepPromote, rec, rec.Links); err != nil {
			return err
		}
	}
	return nil
}

// uses counts the later records, at the clock, that link to or support
// procedure m (memsync's own records left out).
func (c *cycle) uses(m *memo) int {
	users := map[string]bool{}
	for _, e := range m.events {
		if e.Relation != score.ConflictsWith && e.Consolidation == "" && e.TS.After(m.rec.TS) && !e.TS.After(c.now) &&
			!e.Kind.Memsync() {
			users[e.UUID] = true
		}
	}
	return len(users)
}

// latest is the later of a and b.
func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func (c *cycle) prune() error {
	byWords := map[uint64][]*memo{}
	dupOf := map[string]string{}
	var dups, retired []string
	reasons := map[string]string{}
	for _, m := range c.order {
		if !m.own() || m.rec.Tier != "learning" {
			continue
		}
		r := c.eval(m)
		switch {
		case r.Pruned:
		case r.Status == score.Superseded:
			retired = append(retired, m.rec.UUID)
			reasons[m.rec.UUID] = "superseded by " + m.replacedBy
		case r.Status == score.Archived:
			retired = append(retired, m.rec.UUID)
			reasons[m.rec.UUID] = "archived" // its importance depends on the clock: not part of the record
		default:
			if o := c.duplicateOf(m, byWords); o != nil {
				dups = append(dups, m.rec.UUID)
				dupOf[m.rec.UUID] = o.rec.UUID
			}
		}
	}
	for _, group := range []struct {
		reason string
		ids    []string
	}{{"duplicate", dups}, {"retired", retired}} {
		slices.Sort(group.ids)
		for len(group.ids) > 0 {
			chunk := group.ids[:min(pruneChunk, len(group.ids))]
			group.ids = group.ids[len(chunk):]
			fields := map[string]any{journal.FieldConsolidation: journal.ConsolidationPrune, "reason": group.reason}
			why := map[string]string{}
			// The key holds every field that varies: the targets and why
			// each goes (which older record it repeats, which record
			// replaced it can differ between hosts). The ts is one
			// microsecond after the newest target's, so that the prune
			// comes after every target (score: archived until a later
			// reference).
			key := []string{c.opts.Agent, group.reason}
			ts := time.Time{}
			for _, id := range chunk {
				if group.reason == "duplicate" {
					why[id] = "duplicate of " + dupOf[id]
				} else {
					why[id] = reasons[id]
				}
				key = append(key, id, why[id])
				ts = latest(ts, c.mems[id].rec.TS)
			}
			fields["why_each"] = why
			rec := journal.Record{UUID: RecordUUID(journal.ConsolidationPrune, key...), TS: ts.Add(time.Microsecond),
				Kind: journal.KindFeedback, Links: slices.Clone(chunk), Extra: extra(fields),
				Text: fmt.Sprintf("Consolidation archived %d learning records (%s).", len(chunk), group.reason)}
			if err := c.write(StepPrune, rec, rec.Links); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c *cycle) verify() error {
	for _, m := range slices.Clone(c.order) {
		if !m.own() || m.rec.Tier != "core" || !m.supersededAt.IsZero() && !m.supersededAt.After(c.now) {
			continue
		}
		newer := map[string]time.Time{} // by uuid, its ts
		for _, s := range m.conflicts {
			if s.ts.After(m.rec.TS) || s.ts.Equal(m.rec.TS) && s.uuid > m.rec.UUID {
				newer[s.uuid] = s.ts
			}
		}
		cw := m.textWords()
		for _, o := range c.order {
			if o == m || !o.own() || !o.rec.TS.After(m.rec.TS) || o.rec.TS.After(c.now) {
				continue
			}
			if surprise.Contradicts(cw, o.textWords()) {
				newer[o.rec.UUID] = o.rec.TS
			}
		}
		ids := make([]string, 0, len(newer))
		for id := range newer {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			// Its ts is the newer record's: the moment the contradiction
			// arose (a human's verification after it keeps the core memory).
			rec := journal.Record{UUID: RecordUUID(journal.ConsolidationVerify, m.rec.UUID, id), TS: latest(m.rec.TS, newer[id]), Kind: journal.KindFeedback,
				Text:  fmt.Sprintf("Core memory %s is contradicted by the newer %s: review it (flag it verified to keep it).", m.rec.UUID, id),
				Links: []string{m.rec.UUID, id}, Extra: extra(map[string]any{journal.FieldConsolidation: journal.ConsolidationVerify})}
			if err := c.write(StepVerify, rec, rec.Links); err != nil {
				return err
			}
		}
	}
	for _, m := range c.order {
		if m.rec.Consolidation() != journal.ConsolidationVerify || len(m.rec.Links) != 2 {
			continue
		}
		if core := c.mems[m.rec.Links[0]]; core != nil && c.eval(core).Status == score.Review && c.eval(core).ToReview {
			c.rep.Review = append(c.rep.Review, Review{Core: core.rec.UUID, Newer: m.rec.Links[1], Text: short(core.rec.Text, 300)})
		}
	}
	return nil
}

func (c *cycle) outcome() error {
	for _, m := range slices.Clone(c.order) {
		if !m.own() || !score.AwaitingOutcome(m.memory(), m.events, c.now) {
			continue
		}
		q := score.FollowUpQuestion(m.rec.Text, m.rec.TS)
		c.rep.FollowUps = append(c.rep.FollowUps, FollowUp{Decision: m.rec.UUID, Question: q})
		// Its ts is the moment the decision became due for a follow-up.
		rec := journal.Record{UUID: RecordUUID(journal.ConsolidationFollowUp, m.rec.UUID), TS: m.rec.TS.Add(score.FollowUpAfter), Kind: journal.KindFeedback,
			Text: q, Links: []string{m.rec.UUID}, Extra: extra(map[string]any{journal.FieldConsolidation: journal.ConsolidationFollowUp})}
		if err := c.write(StepOutcome, rec, rec.Links); err != nil {
			return err
		}
	}
	return nil
}

func extraString(r *journal.Record, field string) string {
	var s string
	if json.Unmarshal(r.Extra[field], &s) != nil {
		return ""
	}
	return s
}

// short cuts text to n runes on one line.
func short(text string, n int) string {
	text = strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(text) <= n {
		return text
	}
	r := []rune(text)
	return string(r[:n-1]) + "…"
}
