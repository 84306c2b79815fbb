package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
)

// defaultRecallData is the LoCoMo development set, read at run time from
// the shared folder beside the repository (it is CC BY-NC: never copied in).
const defaultRecallData = "../shared/eval/locomo-dev/locomo-dev.json"

// recallAgent writes every turn of a conversation: one agent, one private group.
const recallAgent = "locomo"

// recallK is the deepest cut measured (recall@10, hit@10, MRR@10).
const recallK = 10

// locomoConversation is one conversation of the dev set, as far as the
// benchmark reads it.
type locomoConversation struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []locomoQA                 `json:"qa"`
}

type locomoQA struct {
	Question string `json:"question"`
	Evidence []string
	Category int `json:"category"`
}

type locomoTurn struct {
	Speaker     string `json:"speaker"`
	DiaID       string `json:"dia_id"`
	Text        string `json:"text"`
	BlipCaption string `json:"blip_caption"`
}

// recallCase is one conversation ready to measure: its turns as records and
// its answerable questions with repaired evidence ids.
type recallCase struct {
	id        string
	records   []journal.Record
	uuidOf    map[string]string // dia_id → uuid
	sessionOf map[string]string // uuid → its LoCoMo session, whether the records carry it or not
	questions []recallQuestion
	dropped   int       // evidence ids dropped (not turns of the conversation)
	repaired  int       // evidence ids rewritten to a turn's id
	split     int       // evidence entries that held several ids
	last      time.Time // the last turn's time
}

type recallQuestion struct {
	text     string
	category int
	evidence map[string]bool   // uuids
	sessions map[string]bool   // the LoCoMo sessions of the evidence turns
	session  map[string]string // every turn's LoCoMo session (uuid → session), with or without the field
}

// categoryNames are LoCoMo's categories (5, adversarial, is left out).
var categoryNames = map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

// loadLocomo reads the dev set at path and keeps the first n conversations
// (0: all). With sessions false the records carry no session field, as
// imported conversations, direct writers and MCP hosts that pass none
// write them.
func loadLocomo(path string, n int, sessions bool) ([]*recallCase, error) {
	return loadLocomoOnly(path, n, sessions, nil)
}

// loadLocomoOnly is loadLocomo of the conversations whose index (0-based,
// in the file's order) only holds; nil: every one.
func loadLocomoOnly(path string, n int, sessions bool, only map[int]bool) ([]*recallCase, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var convs []locomoConversation
	if err := json.Unmarshal(raw, &convs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if n > 0 && n < len(convs) {
		convs = convs[:n]
	}
	var out []*recallCase
	for i, c := range convs {
		if only != nil && !only[i] {
			continue
		}
		rc, err := newRecallCase(i, c, sessions)
		if err != nil {
			return nil, fmt.Errorf("%s: conversation %s: %w", path, c.SampleID, err)
		}
		out = append(out, rc)
	}
	return out, nil
}

// sessionTime parses LoCoMo's "1:56 pm on 8 May, 2023".
func sessionTime(s string) (time.Time, error) {
	return time.Parse("3:04 pm on 2 January, 2006", strings.TrimSpace(s))
}

func newRecallCase(i int, c locomoConversation, withSessions bool) (*recallCase, error) {
	rc := &recallCase{id: c.SampleID, uuidOf: map[string]string{}, sessionOf: map[string]string{}}
	if rc.id == "" {
		rc.id = strconv.Itoa(i)
	}
	var sessions []int
	for k := range c.Conversation {
		if m := sessionKey.FindStringSubmatch(k); m != nil {
			n, _ := strconv.Atoi(m[1])
			sessions = append(sessions, n)
		}
	}
	sort.Ints(sessions)
	for _, s := range sessions {
		var when string
		if err := json.Unmarshal(c.Conversation[fmt.Sprintf("session_%d_date_time", s)], &when); err != nil {
			return nil, fmt.Errorf("session %d: date: %w", s, err)
		}
		start, err := sessionTime(when)
		if err != nil {
			return nil, fmt.Errorf("session %d: %w", s, err)
		}
		var turns []locomoTurn
		if err := json.Unmarshal(c.Conversation[fmt.Sprintf("session_%d", s)], &turns); err != nil {
			return nil, fmt.Errorf("session %d: %w", s, err)
		}
		for j, t := range turns {
			text := t.Speaker + ": " + t.Text
			if t.BlipCaption != "" {
				text += " [image: " + t.BlipCaption + "]"
			}
			uuid := "turn_" + t.DiaID
			rc.uuidOf[t.DiaID] = uuid
			ts := start.Add(time.Duration(j) * time.Minute).UTC()
			if ts.After(rc.last) {
				rc.last = ts
			}
			r := journal.Record{
				UUID: uuid, TS: ts, Agent: recallAgent,
				Kind: journal.KindObservation, Scope: journal.ScopePrivate, Text: text,
			}
			if withSessions {
				r.Session = fmt.Sprintf("session_%d", s)
			}
			rc.sessionOf[uuid] = fmt.Sprintf("session_%d", s)
			rc.records = append(rc.records, r)
		}
	}
	for _, q := range c.QA {
		if q.Category == 5 || categoryNames[q.Category] == "" {
			continue
		}
		ev := map[string]bool{}
		for _, raw := range q.Evidence {
			ids := splitEvidence(raw)
			if len(ids) > 1 {
				rc.split++
			}
			for _, id := range ids {
				fixed := repairDiaID(id)
				uuid, ok := rc.uuidOf[fixed]
				if !ok {
					rc.dropped++
					continue
				}
				if fixed != id {
					rc.repaired++
				}
				ev[uuid] = true
			}
		}
		if len(ev) == 0 {
			continue // nothing left to find: the question cannot be scored
		}
		sessions := map[string]bool{}
		for u := range ev {
			sessions[rc.sessionOf[u]] = true
		}
		rc.questions = append(rc.questions, recallQuestion{text: q.Question, category: q.Category, evidence: ev,
			sessions: sessions, session: rc.sessionOf})
	}
	return rc, nil
}

// UnmarshalJSON takes evidence as a list of strings, tolerating other values.
func (q *locomoQA) UnmarshalJSON(b []byte) error {
	type plain locomoQA
	var p struct {
		plain
		Evidence []any `json:"evidence"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*q = locomoQA(p.plain)
	for _, e := range p.Evidence {
		if s, ok := e.(string); ok {
			q.Evidence = append(q.Evidence, s)
		}
	}
	return nil
}

// splitEvidence splits one evidence entry that holds several ids
// ("D8:6; D9:17", "D1:3 D1:5").
func splitEvidence(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == ',' || unicode.IsSpace(r) })
}

var diaIDShape = regexp.MustCompile(`^D:?(\d+):0*(\d+)$`)

// repairDiaID rewrites the malformed shapes of the set to a turn id:
// "D:11:26" → "D11:26", "D30:05" → "D30:5". Others are returned as is (and
// dropped when they name no turn).
func repairDiaID(s string) string {
	if m := diaIDShape.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		return fmt.Sprintf("D%d:%s", n, m[2])
	}
	return s
}

// writeRecallRepo writes rc's records into a fresh repository at root.
func writeRecallRepo(root string, rc *recallCase) error {
	dir := memsync.Layout{Root: root}.JournalDir(recallAgent)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string][]byte{}
	for i := range rc.records {
		r := &rc.records[i]
		if err := r.Validate(); err != nil {
			return fmt.Errorf("turn %s: %w", r.UUID, err)
		}
		name := journal.FileName(r.TS)
		files[name] = append(append(files[name], r.Canonical()...), '\n')
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// recallScores accumulates the metrics of one path, overall and per category.
type recallScores struct {
	n                   map[int]int
	r5, r10, hit10, mrr map[int]float64
	// s5, s10: session level, any evidence session among the sessions of
	// the first 5 (10) turns (the measure of the published figures).
	s5, s10 map[int]float64
}

func newRecallScores() *recallScores {
	return &recallScores{n: map[int]int{}, r5: map[int]float64{}, r10: map[int]float64{},
		hit10: map[int]float64{}, mrr: map[int]float64{}, s5: map[int]float64{}, s10: map[int]float64{}}
}

// add scores one question's ranked uuids (category 0 is overall).
func (s *recallScores) add(q recallQuestion, ranked []string) {
	var found5, found10 int
	rr := 0.0
	for i, u := range ranked[:min(len(ranked), recallK)] {
		if !q.evidence[u] {
			continue
		}
		if i < 5 {
			found5++
		}
		found10++
		if rr == 0 {
			rr = 1 / float64(i+1)
		}
	}
	var ses5, ses10 bool
	for i, u := range ranked[:min(len(ranked), recallK)] {
		if q.sessions[q.session[u]] {
			ses10 = true
			ses5 = ses5 || i < 5
		}
	}
	n := float64(len(q.evidence))
	for _, c := range []int{0, q.category} {
		if ses5 {
			s.s5[c]++
		}
		if ses10 {
			s.s10[c]++
		}
		s.n[c]++
		s.r5[c] += float64(found5) / n
		s.r10[c] += float64(found10) / n
		if found10 > 0 {
			s.hit10[c]++
		}
		s.mrr[c] += rr
	}
}

func (s *recallScores) mean(m map[int]float64, c int) float64 {
	if s.n[c] == 0 {
		return math.NaN()
	}
	return m[c] / float64(s.n[c])
}

// bm25 is the plain baseline: Okapi BM25 (k1 1.2, b 0.75) over lowercase
// words with English stopwords removed, nothing else. It shares no code
// with memsync's search on purpose.
type bm25 struct {
	uuids []string
	tf    []map[string]int
	dl    []float64
	df    map[string]int
	avgdl float64
}

func newBM25(recs []journal.Record) *bm25 {
	x := &bm25{df: map[string]int{}}
	total := 0.0
	for _, r := range recs {
		words := baselineWords(r.Text)
		tf := map[string]int{}
		for _, w := range words {
			tf[w]++
		}
		for w := range tf {
			x.df[w]++
		}
		x.uuids = append(x.uuids, r.UUID)
		x.tf = append(x.tf, tf)
		x.dl = append(x.dl, float64(len(words)))
		total += float64(len(words))
	}
	x.avgdl = max(total/float64(max(len(recs), 1)), 1)
	return x
}

// search returns the uuids of the k best documents: score descending, then uuid.
func (x *bm25) search(query string, k int) []string {
	out, _ := x.scoredSearch(query, k)
	return out
}

// scoredSearch is search with each hit's BM25 score beside it.
func (x *bm25) scoredSearch(query string, k int) ([]string, []float64) {
	const k1, b = 1.2, 0.75
	terms := map[string]bool{}
	for _, w := range baselineWords(query) {
		terms[w] = true
	}
	n := float64(len(x.uuids))
	type scored struct {
		i int
		s float64
	}
	var hits []scored
	for i, tf := range x.tf {
		s := 0.0
		for t := range terms {
			f := float64(tf[t])
			if f == 0 {
				continue
			}
			df := float64(x.df[t])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			s += idf * f * (k1 + 1) / (f + k1*(1-b+b*x.dl[i]/x.avgdl))
		}
		if s > 0 {
			hits = append(hits, scored{i, s})
		}
	}
	sort.Slice(hits, func(a, c int) bool {
		if hits[a].s != hits[c].s {
			return hits[a].s > hits[c].s
		}
		return x.uuids[hits[a].i] < x.uuids[hits[c].i]
	})
	var out []string
	var scores []float64
	for _, h := range hits[:min(len(hits), k)] {
		out = append(out, x.uuids[h.i])
		scores = append(scores, h.s)
	}
	return out, scores
}

// baselineWords are text's lowercase words (letters and digits) without
// English stopwords (NLTK's list, apostrophes dropped).
func baselineWords(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\''
	}) {
		w = strings.ReplaceAll(w, "'", "")
		if w != "" && !baselineStopwords[w] {
			out = append(out, w)
		}
	}
	return out
}

var baselineStopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`i me my myself we our ours ourselves you youre youve youll youd your yours
		yourself yourselves he him his himself she shes her hers herself it its itself they them their theirs
		themselves what which who whom this that thatll these those am is are was were be been being have has had
		having do does did doing a an the and but if or because as until while of at by for with about against
		between into through during before after above below to from up down in out on off over under again
		further then once here there when where why how all any both each few more most other some such no nor
		not only own same so than too very s t can will just don dont should shouldve now d ll m o re ve y ain
		aren arent couldn couldnt didn didnt doesn doesnt hadn hadnt hasn hasnt haven havent isn isnt ma mightn
		mightnt mustn mustnt needn neednt shan shant shouldn shouldnt wasn wasnt weren werent won wont wouldn wouldnt`) {
		m[w] = true
	}
	return m
}()
