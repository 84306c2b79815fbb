// Package packet builds working-memory packets (SPEC §8): the compact
// context one step of an agent needs, routed by the step's role, instead of
// a flat top-k. Build is a pure, deterministic function of the candidate
// memories (scored by SPEC §7's one rule, memsync/score, through
// read.ScoreNodes), the request and the clock; Gather collects the
// candidates from any memsync.Searcher (both graphs and the offline path),
// so every reader feeds the same function and gets the same packet.
//
// # Routing
//
// Stage one puts each candidate in one block: task_scoped (its task is
// the request's), session_scoped (its session is), durable_global (core
// tier, a preference, procedure, reflection or summary, or importance ≥
// 0.8) or recent_fallback (anything else). A block scores
//
//	0.35×scope bias (task 1, session 0.8, durable 0.6, recent 0.3)
//	+ 0.20×role compatibility (share of its memories the role reads)
//	+ 0.25×best goal overlap + 0.10×best question overlap
//	+ 0.10×best failure overlap + 0.10×best freshness
//
// and of the blocks holding memories of the role's kinds, those scoring
// at least 0.6× the best one (at most three) are selected. Stage two ranks
// the memories of the role's kinds in selected blocks, and the off-role
// memories the role may use (below) wherever they are:
//
//	0.30×goal overlap + 0.10×constraint overlap + 0.10×failure overlap
//	+ 0.05×question overlap + 0.10 task match + 0.05 session match
//	+ 0.20×importance + 0.10×confidence + 0.05 verified or successful outcome
//	+ 0.05×freshness + 0.06 per SUPPORTS from a later record (at most 3)
//	− 0.20 when a newer record contradicts it + 0.10×its block's score
//	− 0.10 when it is of a kind the role does not read (OffRolePenalty)
//
// ties by uuid. Overlap is the share of a text's distinct terms found in
// the memory's text and tags, terms as memsync/analysis makes them for
// every search path (stopwords dropped, Porter stems).
//
// # Role kinds are weights, not walls
//
// A role may use the kinds it reads (Role.Reads) and, of the other kinds,
// a memory scoped to the request's task or session, or one that answers
// the goal clearly better than every candidate of the role's kinds: when
// one of those holds a goal term, goal overlap at least ClearlyBetterMin
// and at least ClearlyBetterRatio times theirs; when none does, any goal
// term (so a packet is empty only when no memory of the reader's groups
// shares a term with the goal). Such a memory is ranked whatever its
// block's selection (SPEC §8.4 says it enters), goes to relevant_facts,
// whatever its kind, and ranks OffRolePenalty below a role-matched memory
// of similar relevance; the field's cap holds as ever.
// Importance, confidence, status, support and contradiction all come from
// score.Result: this package never restates SPEC §7. Archived and
// superseded memories are never in a packet.
package packet

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/analysis"
	"github.com/memsync/memsync/memsync/score"
)

// Role is the step a packet is for; it decides which kinds it reads.
type Role string

// The four roles of SPEC §8.
const (
	Planner   Role = "planner"
	Executor  Role = "executor"
	Critic    Role = "critic"
	Responder Role = "responder"
)

// Roles lists the roles, in the order usage prints them.
var Roles = []Role{Planner, Executor, Critic, Responder}

// ErrUnknownRole is returned by ParseRole for a name that is not a role.
var ErrUnknownRole = errors.New("unknown role")

// ParseRole reads a role name.
func ParseRole(s string) (Role, error) {
	for _, r := range Roles {
		if string(r) == s {
			return r, nil
		}
	}
	return "", fmt.Errorf("%w %q (one of planner, executor, critic, responder)", ErrUnknownRole, s)
}

// Class is the kind of memory a packet field holds (SPEC §8's memory types).
type Class string

// The classes. Episode is observation, fact, decision, task, outcome,
// correction and conflict (and a promotion, which restates one); summary is
// summary and compaction.
const (
	Preference Class = "preference"
	Procedure  Class = "procedure"
	Reflection Class = "reflection"
	Summary    Class = "summary"
	Episode    Class = "episode"
)

// ClassOf is the class of kind k; false for feedback, which is a signal
// about a memory, not a memory a step reads.
func ClassOf(k journal.Kind) (Class, bool) {
	switch k {
	case journal.KindPreference:
		return Preference, true
	case journal.KindProcedure:
		return Procedure, true
	case journal.KindReflection:
		return Reflection, true
	case journal.KindSummary, journal.KindCompaction:
		return Summary, true
	case journal.KindFeedback:
		return "", false
	}
	return Episode, true
}

// Reads reports whether role r reads class c (SPEC §8's routing table).
func (r Role) Reads(c Class) bool {
	switch r {
	case Planner:
		return c == Preference || c == Procedure || c == Summary
	case Executor:
		return c == Preference || c == Procedure || c == Episode || c == Reflection
	case Critic:
		return c == Reflection || c == Preference || c == Summary
	case Responder:
		return c == Preference || c == Summary || c == Procedure
	}
	return false
}

// Kinds lists the journal kinds of class c.
func (c Class) Kinds() []journal.Kind {
	switch c {
	case Preference:
		return []journal.Kind{journal.KindPreference}
	case Procedure:
		return []journal.Kind{journal.KindProcedure}
	case Reflection:
		return []journal.Kind{journal.KindReflection}
	case Summary:
		return []journal.Kind{journal.KindSummary, journal.KindCompaction}
	}
	return []journal.Kind{journal.KindObservation, journal.KindFact, journal.KindDecision, journal.KindTask,
		journal.KindOutcome, journal.KindCorrection, journal.KindConflict, journal.KindPromotion}
}

// Classes is every class, in field order.
var Classes = []Class{Preference, Procedure, Reflection, Summary, Episode}

// Block is the coarse group a candidate belongs to (stage one).
type Block string

// The four blocks.
const (
	TaskScoped     Block = "task_scoped"
	SessionScoped  Block = "session_scoped"
	DurableGlobal  Block = "durable_global"
	RecentFallback Block = "recent_fallback"
)

var blocks = []Block{TaskScoped, SessionScoped, DurableGlobal, RecentFallback}

// Caps of the fields (SPEC §8), and of the core tier, which is always in
// the packet but kept small.
const (
	CapHardConstraints = 4
	CapProcedures      = 3
	CapPitfalls        = 3
	CapRelevantFacts   = 3
	CapOpenQuestions   = 5
	CapSelected        = 5
	CapCore            = 5
	// MaxText is the longest item text a packet carries, in runes; a
	// longer one is cut with "…" (the uuid leads to the whole).
	MaxText = 400
)

// Request is what a step asks for.
type Request struct {
	Role        Role
	Agent       string
	Goal        string
	Task        string
	Session     string
	Constraints []string
	Failures    []string
	Questions   []string
	AsOf        time.Time
	// Cutoff leaves out records dated after AsOf (an explicit --as-of);
	// without it (a packet at the present) every record is read, one
	// dated in the future as if written at AsOf (SPEC §7 "The clock").
	Cutoff bool
}

// Validate reports the first thing wrong with the request, naming the flag.
func (q Request) Validate() error {
	if _, err := ParseRole(string(q.Role)); err != nil {
		return fmt.Errorf("--role: %w", err)
	}
	if q.Agent == "" {
		return errors.New("--agent: required")
	}
	if !journal.ValidAgent(q.Agent) {
		return fmt.Errorf("--agent: invalid agent name %q", q.Agent)
	}
	if strings.TrimSpace(q.Goal) == "" {
		return errors.New("--goal: required, and not blank")
	}
	return nil
}

// Groups are the group_ids the requesting agent may see.
func (q Request) Groups() []string {
	return journal.ReaderGroups(q.Agent)
}

// Item is one entry of a packet field. An open question from --question
// has no uuid.
type Item struct {
	UUID       string   `json:"uuid,omitempty"`
	Kind       string   `json:"kind"`
	Agent      string   `json:"agent,omitempty"`
	TS         string   `json:"ts,omitempty"`
	Text       string   `json:"text"`
	Why        string   `json:"why"`
	Block      string   `json:"block,omitempty"`
	Score      float64  `json:"score,omitempty"`
	Importance float64  `json:"importance,omitempty"`
	Confidence float64  `json:"confidence,omitempty"`
	Status     string   `json:"status,omitempty"`
	Replaces   []string `json:"replaces,omitempty"`
	BuildsOn   []string `json:"builds_on,omitempty"`
}

// BlockScore is how stage one scored a block.
type BlockScore struct {
	Block    string  `json:"block"`
	Score    float64 `json:"score"`
	Memories int     `json:"memories"`
	Selected bool    `json:"selected"`
}

// Packet is a working-memory packet (SPEC §5's packet --json).
type Packet struct {
	Role               string       `json:"role"`
	Agent              string       `json:"agent"`
	Goal               string       `json:"goal"`
	Task               string       `json:"task,omitempty"`
	Session            string       `json:"session,omitempty"`
	AsOf               string       `json:"as_of"`
	Offline            bool         `json:"offline"`
	OfflineReason      string       `json:"offline_reason,omitempty"`
	Core               []Item       `json:"core"`
	HardConstraints    []Item       `json:"hard_constraints"`
	ProceduresToFollow []Item       `json:"procedures_to_follow"`
	PitfallsToAvoid    []Item       `json:"pitfalls_to_avoid"`
	RelevantFacts      []Item       `json:"relevant_facts"`
	OpenQuestions      []Item       `json:"open_questions"`
	SelectedMemoryIDs  []string     `json:"selected_memory_ids"`
	Blocks             []BlockScore `json:"blocks"`
	Candidates         int          `json:"candidates"`
}

// terms is a request text's distinct terms, as memsync/analysis makes
// them for every search path (stopwords dropped, Porter stems).
type terms []string

func termsOf(texts ...string) terms {
	var out terms
	for _, t := range texts {
		for _, w := range analysis.QueryTerms(t) {
			if !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
	}
	return out
}

// overlap is the share of q's words that words holds.
func (q terms) overlap(words map[string]bool) (share float64, hit int) {
	if len(q) == 0 {
		return 0, 0
	}
	for _, w := range q {
		if words[w] {
			hit++
		}
	}
	return float64(hit) / float64(len(q)), hit
}

// signals is what stage two reads of one candidate.
type signals struct {
	memsync.Scored
	class                   Class
	block                   Block
	goal, cons, fail, quest float64
	goalHit                 int
	taskMatch, sessionMatch bool
	offRole                 bool // of a kind the role does not read
	admitted                bool // the role reads it, or it clears an off-role door (admit)
	supports                int
	contradictedBy          []string // visible newer records contradicting it; "" for one the reader may not see
	success                 bool
	score                   float64
}

func analyse(req Request, q [4]terms, s memsync.Scored) signals {
	c, _ := ClassOf(s.Kind)
	words := map[string]bool{}
	for _, w := range analysis.Terms(s.Text + " " + strings.Join(s.Tags, " ")) {
		words[w] = true
	}
	sig := signals{Scored: s, class: c}
	sig.goal, sig.goalHit = q[0].overlap(words)
	sig.cons, _ = q[1].overlap(words)
	sig.fail, _ = q[2].overlap(words)
	sig.quest, _ = q[3].overlap(words)
	sig.taskMatch = req.Task != "" && s.Task == req.Task
	sig.sessionMatch = req.Session != "" && s.Session == req.Session
	sig.success = s.Result.Verified
	for _, e := range s.Result.Effects {
		switch {
		case e.Kind == journal.KindPromotion || e.Kind == journal.KindCompaction || e.Kind == "decay":
		case e.Relation == score.ConflictsWith:
			sig.contradictedBy = append(sig.contradictedBy, visibleID(e.Event))
		case e.Relation == score.Supports:
			sig.supports++
		}
	}
	switch {
	case sig.taskMatch:
		sig.block = TaskScoped
	case sig.sessionMatch:
		sig.block = SessionScoped
	case s.Tier == "core" || c != Episode || s.Result.Importance >= 0.8:
		sig.block = DurableGlobal
	default:
		sig.block = RecentFallback
	}
	return sig
}

func visibleID(e score.Event) string {
	if e.Visible {
		return e.UUID
	}
	return ""
}

func scopeBias(b Block) float64 {
	switch b {
	case TaskScoped:
		return 1
	case SessionScoped:
		return 0.8
	case DurableGlobal:
		return 0.6
	}
	return 0.3
}

// Build makes the packet for req from its candidates, each scored at
// req.AsOf. It is pure and deterministic: the same candidates (in any
// order), request and clock give the same packet. Candidates the agent
// may not see, written after the clock, archived, superseded or feedback
// are left out whatever else is true of them.
func Build(req Request, cands []memsync.Scored) Packet {
	groups := req.Groups()
	p := Packet{
		Role: string(req.Role), Agent: req.Agent, Goal: req.Goal, Task: req.Task, Session: req.Session,
		AsOf: req.AsOf.UTC().Format(time.RFC3339Nano),
		Core: []Item{}, HardConstraints: []Item{}, ProceduresToFollow: []Item{}, PitfallsToAvoid: []Item{},
		RelevantFacts: []Item{}, OpenQuestions: []Item{}, SelectedMemoryIDs: []string{}, Blocks: []BlockScore{},
	}
	q := [4]terms{termsOf(req.Goal), termsOf(req.Constraints...), termsOf(req.Failures...), termsOf(req.Questions...)}

	// The candidates that may be in a packet at all, once each.
	seen := map[string]bool{}
	visible := map[string]journal.Kind{}
	var sigs []signals
	for _, c := range cands {
		if seen[c.UUID] || !slices.Contains(groups, c.Record.GroupID()) || req.Clock().Hides(c.TS) {
			continue
		}
		seen[c.UUID] = true
		visible[c.UUID] = c.Kind
		if _, ok := ClassOf(c.Kind); !ok || c.Result.Status.Hidden() {
			continue
		}
		sigs = append(sigs, analyse(req, q, c))
	}
	slices.SortFunc(sigs, func(a, b signals) int { return strings.Compare(a.UUID, b.UUID) })
	p.Candidates = len(sigs)
	admit(req.Role, len(q[0]), sigs)

	// Stage one: score the blocks.
	type blockAcc struct {
		n, read, used            int // memories; of the role's kinds; that the role may use
		goal, quest, fail, fresh float64
	}
	acc := map[Block]*blockAcc{}
	for _, b := range blocks {
		acc[b] = &blockAcc{}
	}
	for _, s := range sigs {
		a := acc[s.block]
		a.n++
		if req.Role.Reads(s.class) {
			a.read++
		}
		if s.admitted {
			a.used++
		}
		a.goal, a.quest, a.fail = max(a.goal, s.goal), max(a.quest, s.quest), max(a.fail, s.fail)
		a.fresh = max(a.fresh, s.Freshness)
	}
	blockScore := map[Block]float64{}
	best := 0.0
	for _, b := range blocks {
		a := acc[b]
		if a.used == 0 {
			continue // nothing in it this role may use
		}
		sc := 0.35*scopeBias(b) + 0.20*float64(a.read)/float64(a.n) + 0.25*a.goal + 0.10*a.quest + 0.10*a.fail + 0.10*a.fresh
		blockScore[b] = round(sc)
		if a.read > 0 {
			// Only blocks of the role's kinds compete for selection; an
			// off-role memory the role may use is ranked wherever it is.
			best = max(best, blockScore[b])
		}
	}
	order := slices.Clone(blocks)
	slices.SortStableFunc(order, func(a, b Block) int { return cmpDesc(blockScore[a], blockScore[b]) })
	selected := map[Block]bool{}
	for _, b := range order {
		if acc[b].read > 0 && len(selected) < 3 && blockScore[b] >= 0.6*best {
			selected[b] = true
		}
	}
	for _, b := range blocks {
		p.Blocks = append(p.Blocks, BlockScore{Block: string(b), Score: blockScore[b], Memories: acc[b].n, Selected: selected[b]})
	}

	// The core tier, always.
	var core []signals
	for _, s := range sigs {
		if s.Tier == "core" {
			core = append(core, s)
		}
	}
	slices.SortFunc(core, func(a, b signals) int {
		if c := a.TS.Compare(b.TS); c != 0 {
			return c
		}
		return strings.Compare(a.UUID, b.UUID)
	})
	if len(core) > CapCore {
		core = core[len(core)-CapCore:] // the newest
	}
	inCore := map[string]bool{}
	for _, s := range core {
		inCore[s.UUID] = true
		p.Core = append(p.Core, item(s, "core tier: always in the packet", visible))
	}

	// Stage two: rank inside the selected blocks, and the off-role
	// memories the role may use wherever they are.
	var ranked []signals
	for _, s := range sigs {
		if inCore[s.UUID] || !s.admitted || !selected[s.block] && !s.offRole {
			continue
		}
		s.score = round(rank(s, blockScore[s.block]))
		ranked = append(ranked, s)
	}
	slices.SortFunc(ranked, func(a, b signals) int {
		if c := cmpDesc(a.score, b.score); c != 0 {
			return c
		}
		return strings.Compare(a.UUID, b.UUID)
	})
	fields := map[Class]*[]Item{
		Preference: &p.HardConstraints, Procedure: &p.ProceduresToFollow, Reflection: &p.PitfallsToAvoid,
		Summary: &p.RelevantFacts, Episode: &p.RelevantFacts,
	}
	caps := map[Class]int{Preference: CapHardConstraints, Procedure: CapProcedures, Reflection: CapPitfalls,
		Summary: CapRelevantFacts, Episode: CapRelevantFacts}
	for _, s := range ranked {
		f, c := fields[s.class], caps[s.class]
		if s.offRole {
			f, c = &p.RelevantFacts, CapRelevantFacts
		}
		if len(*f) >= c {
			continue
		}
		*f = append(*f, item(s, why(s, q, visible), visible))
	}
	p.SelectedMemoryIDs = selectedIDs(p)

	// Open questions: the step's own, then decisions waiting for an outcome
	// (the longest waiting first).
	for _, text := range req.Questions {
		if len(p.OpenQuestions) < CapOpenQuestions && strings.TrimSpace(text) != "" {
			p.OpenQuestions = append(p.OpenQuestions, Item{Kind: "question", Text: cut(text), Why: "asked for this step"})
		}
	}
	var waiting []signals
	for _, s := range sigs {
		if score.AwaitingOutcomeOf(s.Kind, s.TS, s.Result, req.AsOf) {
			waiting = append(waiting, s)
		}
	}
	slices.SortFunc(waiting, func(a, b signals) int {
		if c := a.TS.Compare(b.TS); c != 0 {
			return c
		}
		return strings.Compare(a.UUID, b.UUID)
	})
	for _, s := range waiting {
		if len(p.OpenQuestions) >= CapOpenQuestions {
			break
		}
		it := item(s, fmt.Sprintf("decision without an outcome for %d days", int(req.AsOf.Sub(s.TS)/score.Day)), visible)
		it.Text = cut(score.FollowUpQuestion(s.Text, s.TS))
		p.OpenQuestions = append(p.OpenQuestions, it)
	}
	return p
}

// selectedIDs is p's selected_memory_ids: its core tier, then the best
// CapSelected of the memories its fields show (score, then uuid), the
// order stage two ranked them in. Every id is one the packet shows.
func selectedIDs(p Packet) []string {
	ids := []string{}
	for _, it := range p.Core {
		ids = append(ids, it.UUID)
	}
	var shown []Item
	for _, f := range [][]Item{p.HardConstraints, p.ProceduresToFollow, p.PitfallsToAvoid, p.RelevantFacts} {
		for _, it := range f {
			if it.UUID != "" {
				shown = append(shown, it)
			}
		}
	}
	slices.SortStableFunc(shown, func(a, b Item) int {
		if c := cmpDesc(a.Score, b.Score); c != 0 {
			return c
		}
		return strings.Compare(a.UUID, b.UUID)
	})
	for _, it := range shown[:min(len(shown), CapSelected)] {
		ids = append(ids, it.UUID)
	}
	return ids
}

// Keep is p with only the items keep reports true for, its
// selected_memory_ids made again from what is left (selectedIDs): a
// caller that shows less of a packet (a hook that leaves out the core
// tier, or what the session was already given) never lists as selected
// a memory it does not show. p itself is not changed.
func (p Packet) Keep(keep func(Item) bool) Packet {
	filter := func(items []Item) []Item {
		out := []Item{}
		for _, it := range items {
			if keep(it) {
				out = append(out, it)
			}
		}
		return out
	}
	p.Core, p.HardConstraints, p.ProceduresToFollow = filter(p.Core), filter(p.HardConstraints), filter(p.ProceduresToFollow)
	p.PitfallsToAvoid, p.RelevantFacts, p.OpenQuestions = filter(p.PitfallsToAvoid), filter(p.RelevantFacts), filter(p.OpenQuestions)
	p.SelectedMemoryIDs = selectedIDs(p)
	return p
}

func rank(s signals, block float64) float64 {
	v := 0.30*s.goal + 0.10*s.cons + 0.10*s.fail + 0.05*s.quest
	if s.taskMatch {
		v += 0.10
	}
	if s.sessionMatch {
		v += 0.05
	}
	v += 0.20*s.Result.Importance + 0.10*s.Result.Confidence + 0.05*s.Freshness
	if s.success {
		v += 0.05
	}
	v += 0.06 * float64(min(s.supports, 3))
	if len(s.contradictedBy) > 0 {
		v -= 0.20
	}
	if s.offRole {
		v -= OffRolePenalty
	}
	return v + 0.10*block
}

// Off-role admission (SPEC §8.4: a role's kinds are weights, not walls).
const (
	// ClearlyBetterRatio and ClearlyBetterMin define a memory that answers
	// the goal clearly better than anything of the role's kinds: its goal
	// overlap is at least ClearlyBetterMin (half the goal's terms) and at
	// least ClearlyBetterRatio times the best goal overlap of any candidate
	// of the role's kinds. When no candidate of the role's kinds holds a
	// goal term, one goal term is clearly better than none: a packet is
	// empty only when no memory the reader sees shares a term with the
	// goal (SPEC §8.4: a planner planning "the billing migration" sees
	// the decision "Use postgres for the billing service").
	ClearlyBetterRatio = 1.5
	ClearlyBetterMin   = 0.5
	// OffRolePenalty is what stage two takes from an off-role memory's
	// score, so that it ranks below a role-matched memory of similar
	// relevance: a third of a full goal overlap's weight (0.30).
	OffRolePenalty = 0.10
)

// admit marks which candidates the role may use: those of the kinds it
// reads, and, of the other kinds, a memory scoped to the request's task or
// session, or one that answers the goal clearly better (ClearlyBetterMin,
// ClearlyBetterRatio) than every candidate of the role's kinds. Admitted
// off-role memories go to relevant_facts and rank OffRolePenalty lower.
func admit(role Role, goalTerms int, sigs []signals) {
	best := 0
	for _, s := range sigs {
		if role.Reads(s.class) {
			best = max(best, s.goalHit)
		}
	}
	for i := range sigs {
		s := &sigs[i]
		s.offRole = !role.Reads(s.class)
		s.admitted = !s.offRole || s.taskMatch || s.sessionMatch || clearlyBetter(s.goalHit, best, goalTerms)
	}
}

// clearlyBetter reports whether hit goal terms of goalTerms answer the
// goal clearly better than best, the most any memory of the role's kinds
// holds: any term when best is none, else ClearlyBetterMin of the goal
// and ClearlyBetterRatio of best. The overlaps share their denominator,
// so the terms are compared as counts: exactly, with no rounding at the
// 1.5× edge.
func clearlyBetter(hit, best, goalTerms int) bool {
	if hit == 0 {
		return false
	}
	if best == 0 {
		return true
	}
	return float64(hit) >= ClearlyBetterMin*float64(goalTerms) && float64(hit) >= ClearlyBetterRatio*float64(best)
}

// why is the short reason an item was chosen.
func why(s signals, q [4]terms, visible map[string]journal.Kind) string {
	var r []string
	switch s.block {
	case TaskScoped:
		r = append(r, "task "+s.Task)
	case SessionScoped:
		r = append(r, "session "+s.Session)
	case DurableGlobal:
		r = append(r, "durable "+string(s.class))
	default:
		r = append(r, "recent "+string(s.Kind))
	}
	// The goal's share before the longer off-role note: markdown cuts a
	// reason to as little as 25 runes, and this is what a reader checks.
	if s.goalHit > 0 {
		r = append(r, fmt.Sprintf("goal %d/%d words", s.goalHit, len(q[0])))
	}
	if s.offRole {
		switch {
		case s.taskMatch || s.sessionMatch:
			r = append(r, "beyond the role's kinds: in scope")
		default:
			r = append(r, "beyond the role's kinds: answers the goal clearly better")
		}
	}
	if s.cons > 0 {
		r = append(r, "matches a constraint")
	}
	if s.fail > 0 {
		r = append(r, "matches a failure")
	}
	if s.quest > 0 {
		r = append(r, "matches a question")
	}
	if s.supports > 0 {
		r = append(r, fmt.Sprintf("supported by %d", s.supports))
	}
	if s.success {
		r = append(r, "verified")
	}
	if len(s.contradictedBy) > 0 {
		by := "a newer record"
		if s.contradictedBy[0] != "" {
			by = s.contradictedBy[0]
		}
		r = append(r, "contradicted by "+by)
	}
	for _, id := range append(slices.Clone(s.Record.Links), s.Record.Supports()...) {
		if visible[id] == journal.KindReflection {
			r = append(r, "learned from reflection "+id)
			break
		}
	}
	r = append(r, fmt.Sprintf("importance %.2f", s.Result.Importance))
	return strings.Join(r, "; ")
}

func item(s signals, why string, visible map[string]journal.Kind) Item {
	it := Item{
		UUID: s.UUID, Kind: string(s.Kind), Agent: s.Agent, TS: s.TS.UTC().Format(time.RFC3339Nano),
		Text: cut(s.Text), Why: why, Block: string(s.block), Score: s.score,
		Importance: s.Result.Importance, Confidence: s.Result.Confidence, Status: string(s.Result.Status),
	}
	// The memories it retires, when the reader may see them (a forward link
	// is the old one's replaced_by; this is the same link read backwards).
	for _, id := range s.Record.Supersedes {
		if _, ok := visible[id]; ok && !slices.Contains(it.Replaces, id) {
			it.Replaces = append(it.Replaces, id)
		}
	}
	slices.Sort(it.Replaces)
	// What it builds on, among what the reader may see: a procedure that
	// links a reflection is that lesson made reusable.
	for _, id := range append(slices.Clone(s.Record.Links), s.Record.Supports()...) {
		if _, ok := visible[id]; ok && !slices.Contains(it.BuildsOn, id) {
			it.BuildsOn = append(it.BuildsOn, id)
		}
	}
	slices.Sort(it.BuildsOn)
	return it
}

// cut keeps text to MaxText runes.
func cut(text string) string { return cutTo(text, MaxText) }

func cutTo(text string, n int) string {
	text = strings.TrimSpace(text)
	if utf8.RuneCountInString(text) <= n {
		return text
	}
	r := []rune(text)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

func round(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// Clock is the request's clock (memsync.Clock).
func (req Request) Clock() memsync.Clock {
	return memsync.Clock{At: req.AsOf.UTC(), Cutoff: req.Cutoff}
}
