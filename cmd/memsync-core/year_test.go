package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/memsync/memsync/journal"
	core "github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/packet"
)

// yearBackend is where TestYearInTheLife's reads are answered: a graph the
// daemon projects into, or none (offline: the graph is unreachable and the
// read commands answer from the journals).
type yearBackend struct {
	name    string
	offline bool
	setup   func(t *testing.T, repo string) (env []string, open func() core.Graph)
}

func yearBackends() []yearBackend {
	out := []yearBackend{}
	for _, b := range daemonBackends {
		out = append(out, yearBackend{name: b.name, setup: b.setup})
	}
	return append(out, yearBackend{name: "offline", offline: true, setup: func(*testing.T, string) ([]string, func() core.Graph) {
		return []string{"MEMSYNC_GRAPH=neo4j", "MEMSYNC_NEO4J_URI=bolt://127.0.0.1:1"}, nil
	}})
}

// TestYearInTheLife is issue 24's "Done when", through the built binaries
// and the daemon, on the embedded graph, Neo4j and offline: 400 simulated
// days of four agents (every kind, shared and private, core and learning
// tiers, links on fewer than 1 in 10 records, outcomes, supersessions,
// contradictions, flags through `memsync flag` and feedback records). On
// day 400 (the real present):
//  1. every preference and procedure neither superseded nor flagged wrong
//     is in the planner packet of its topic, for every agent that sees it
//     (the generator keeps at most 4 such preferences and 3 procedures per
//     topic in any agent's view, the packet's caps), and every current core
//     memory is in the agent's packets;
//  2. a search for a record's distinctive words finds it in the top 3, for
//     a sample across the year and every durable memory;
//  3. superseded and wrong-flagged records are out of default search and
//     in search --all;
//  4. explain, show, search and the snapshot agree on importance and
//     status for a sample of memories.
//
// Each failure names the memory, its text and what explain says of it.
func TestYearInTheLife(t *testing.T) {
	if testing.Short() {
		t.Skip("a year of a fleet on three backends takes minutes")
	}
	for _, b := range yearBackends() {
		t.Run(b.name, func(t *testing.T) { yearInTheLife(t, b) })
	}
}

func yearInTheLife(t *testing.T, b yearBackend) {
	repo := newRepo(t, yearAgents...)
	env, open := b.setup(t, repo)
	now := time.Now().UTC().Truncate(time.Second)
	start := time.Now()
	fleet := newYearFleet(t, repo, now, 2024)
	y := &yearReader{repo: repo, env: env, offline: b.offline}
	if keep := os.Getenv("MEMSYNC_KEEP_YEAR"); keep != "" { // a copy to time commands on by hand
		t.Cleanup(func() { exec.Command("cp", "-a", repo, filepath.Join(keep, b.name)).Run() })
	}
	lines := len(fleet.recs) + fleet.feedback + len(fleet.cliFlags)
	t.Logf("%d records (%d with links or supports, %d durable, %d retired, %d flags), written in %v",
		len(fleet.recs), fleet.linked, len(fleet.current((*yearRec).durable)), len(fleet.recs)-len(fleet.current(func(*yearRec) bool { return true })),
		fleet.feedback+len(fleet.cliFlags), time.Since(start).Round(time.Millisecond))
	for _, r := range fleet.cliFlags {
		if code, _, errOut := y.run("flag", r.uuid, "--"+r.flag, "--by", "Shaun"); code != 0 {
			t.Fatalf("flag %s --%s: exit %d: %s", r.uuid, r.flag, code, errOut)
		}
	}
	if !b.offline {
		start = time.Now()
		d := startDaemon(t, repo, env)
		g := open()
		deadline := time.Now().Add(5 * time.Minute)
		for {
			rep := verifyGraph(t, repo, g)
			if rep.OK && rep.JournalRecords >= lines {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("not projected after 5 minutes: %+v\nlog:\n%s", rep, tail(d.stderr.String(), 3000))
			}
			time.Sleep(200 * time.Millisecond)
		}
		if _, err := d.stop(t); err != nil {
			t.Fatalf("daemon exit: %v\n%s", err, tail(d.stderr.String(), 3000))
		}
		// A promotion journaled as the daemon stopped is projected here.
		if code, _, errOut := y.run("sync", "--once"); code != 0 {
			t.Fatalf("sync --once: %d %s", code, errOut)
		}
		if rep := verifyGraph(t, repo, g); !rep.OK {
			t.Fatalf("verify: %+v", rep)
		}
		if code, _, errOut := y.run("cache"); code != 0 {
			t.Fatalf("cache: %d %s", code, errOut)
		}
		t.Logf("projected and cached in %v", time.Since(start).Round(time.Millisecond))
	}

	start = time.Now()
	y.checkPackets(t, fleet)
	t.Logf("packets checked in %v", time.Since(start).Round(time.Millisecond))

	start = time.Now()
	durable := fleet.current(func(r *yearRec) bool { return r.durable() })
	others := fleet.current(func(r *yearRec) bool { return !r.durable() })
	found := y.checkFindable(t, append(durable, yearSample(others, 200, 7)...))
	t.Logf("%d searches for current memories in %v", len(durable)+min(len(others), 200), time.Since(start).Round(time.Millisecond))

	start = time.Now()
	// Every wrong-flagged and every superseded durable memory, and a
	// sample of the other superseded ones.
	var retired, superseded []*yearRec
	for _, r := range fleet.recs {
		switch {
		case r.wrong || r.retired() && r.durable():
			retired = append(retired, r)
		case r.retired():
			superseded = append(superseded, r)
		}
	}
	retired = append(retired, yearSample(superseded, 100-min(len(retired), 50), 5)...)
	foundAll := y.checkRetired(t, retired)
	t.Logf("%d retired memories searched in %v", len(retired), time.Since(start).Round(time.Millisecond))

	start = time.Now()
	var agree []*yearRec
	for _, r := range fleet.recs {
		if r.flag != "" || r.tier == "core" {
			agree = append(agree, r)
		}
	}
	agree = append(agree, yearSample(durable, 15, 11)...)
	agree = append(agree, yearSample(retired, 10, 12)...)
	agree = append(agree, yearSample(others, 25, 13)...)
	maps := []map[string]searchHit{found, foundAll}
	y.checkAgreement(t, fleet, agree, maps)
	t.Logf("%d memories checked for agreement in %v", len(agree), time.Since(start).Round(time.Millisecond))
}

// yearReader runs the built binary against one repository; safe for
// concurrent use.
type yearReader struct {
	repo    string
	env     []string
	offline bool
}

// run runs memsync with args and --repo; it returns the exit code and
// both streams (code -1 when the binary could not run).
func (y *yearReader) run(args ...string) (int, string, string) {
	bin, err := buildBinary()
	if err != nil {
		return -1, "", err.Error()
	}
	cmd := exec.Command(bin, append(args, "--repo", y.repo)...)
	cmd.Env = append(append(os.Environ(), "MEMSYNC_REPO=", "MEMSYNC_GRAPH="), y.env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errOut.String()
	} else if err != nil {
		return -1, out.String(), err.Error()
	}
	return 0, out.String(), errOut.String()
}

// decode runs a --json command into v.
func (y *yearReader) decode(v any, args ...string) error {
	code, out, errOut := y.run(append(args, "--json")...)
	if code != 0 {
		return fmt.Errorf("memsync %s: exit %d: %s", strings.Join(args, " "), code, strings.TrimSpace(errOut))
	}
	if err := json.Unmarshal([]byte(out), v); err != nil {
		return fmt.Errorf("memsync %s: %v in %q", strings.Join(args, " "), err, out)
	}
	return nil
}

// search returns agent's hits for query (extra flags appended).
func (y *yearReader) search(agent, query string, extra ...string) (searchResult, error) {
	var res searchResult
	err := y.decode(&res, append([]string{"search", query, "--agent", agent}, extra...)...)
	if err == nil && res.Offline != y.offline {
		err = fmt.Errorf("search %q: offline = %v (%s)", query, res.Offline, res.Reason)
	}
	return res, err
}

// explain is what explain --json says of r, to its author (extra flags
// appended).
func (y *yearReader) explain(r *yearRec, extra ...string) (explainResult, error) {
	var res explainResult
	err := y.decode(&res, append([]string{"explain", r.uuid, "--agent", r.agent}, extra...)...)
	return res, err
}

// describe is one memory for a failure message: uuid, kind, day, text and
// what explain says of it.
func (y *yearReader) describe(r *yearRec) string {
	d, _ := y.describeStatus(r)
	return d
}

// describeStatus is describe and explain's status of r ("?" when explain
// failed).
func (y *yearReader) describeStatus(r *yearRec) (string, string) {
	s := fmt.Sprintf("%s (%s %s %s, day %d, tier %q, max_age %q, flag %q, superseded by %q) %q",
		r.uuid, r.kind, r.scope, r.agent, r.day, r.tier, r.maxAge, r.flag, r.supersededBy, r.text)
	ex, err := y.explain(r)
	if err != nil {
		return s + "\n      explain: " + err.Error(), "?"
	}
	var events []string
	for _, e := range ex.Events[max(0, len(ex.Events)-3):] {
		events = append(events, e.Effect)
	}
	return s + fmt.Sprintf("\n      explain: importance %.2f status %s max_age %s; last events %q", ex.Importance, ex.Status, ex.MaxAge, events), ex.Status
}

// yearFailures collects the memories an assertion fails on and reports them,
// the first few described.
type yearFailures struct {
	mu    sync.Mutex
	name  string
	total int
	bad   []string
	tally map[string]int // failures by what explain says of the memory
}

// addMemory records a failure on r: the message, r described, and a tally
// by r's kind and explain's status, so a report says at a glance which rule
// is at fault.
func (f *yearFailures) addMemory(y *yearReader, r *yearRec, format string, args ...any) {
	d, status := y.describeStatus(r)
	f.add("%s\n    %s", fmt.Sprintf(format, args...), d)
	durable := ""
	if r.durable() {
		durable = " durable"
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.tally == nil {
		f.tally = map[string]int{}
	}
	f.tally[fmt.Sprintf("%s%s %s", r.kind, durable, status)]++
}

func (f *yearFailures) add(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bad = append(f.bad, fmt.Sprintf(format, args...))
}

// count counts one more check.
func (f *yearFailures) count() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.total++
}

func (f *yearFailures) report(t *testing.T) {
	t.Helper()
	if len(f.bad) == 0 {
		return
	}
	slices.Sort(f.bad)
	shown := f.bad[:min(len(f.bad), 12)]
	var tally []string
	for k, n := range f.tally {
		tally = append(tally, fmt.Sprintf("%s: %d", k, n))
	}
	slices.Sort(tally)
	t.Errorf("%s: %d of %d fail (by kind and explain's status: %s); first %d:\n  - %s",
		f.name, len(f.bad), f.total, strings.Join(tally, ", "), len(shown), strings.Join(shown, "\n  - "))
}

// yearParallel runs fn over items on three workers (the binary's runs
// mostly wait: on files, on the graph).
func yearParallel[T any](items []T, fn func(T)) {
	work := make(chan T)
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				fn(it)
			}
		}()
	}
	for _, it := range items {
		work <- it
	}
	close(work)
	wg.Wait()
}

// checkPackets is assertion 1: for every agent and topic, the planner
// packet for the topic holds every current preference and procedure of
// the topic that the agent sees, and every current core memory it sees.
func (y *yearReader) checkPackets(t *testing.T, f *yearFleet) {
	t.Helper()
	fails := &yearFailures{name: "1. durable memories in the planner packet of their topic"}
	type job struct {
		agent string
		topic int
	}
	var jobs []job
	for _, a := range yearAgents {
		for ti := range yearTopics {
			jobs = append(jobs, job{a, ti})
		}
	}
	yearParallel(jobs, func(j job) {
		var p packet.Packet
		if err := y.decode(&p, "packet", "--role", "planner", "--agent", j.agent, "--goal", yearTopics[j.topic]); err != nil {
			fails.add("%v", err)
			return
		}
		if p.Offline != y.offline {
			fails.add("packet %s %q: offline = %v (%s)", j.agent, yearTopics[j.topic], p.Offline, p.OfflineReason)
		}
		ids := func(items []packet.Item) []string {
			var out []string
			for _, it := range items {
				out = append(out, it.UUID)
			}
			return out
		}
		constraints, procedures, coreIDs := ids(p.HardConstraints), ids(p.ProceduresToFollow), ids(p.Core)
		// What is offered unasked leaves archived and retired memories out.
		for _, items := range [][]packet.Item{p.Core, p.HardConstraints, p.ProceduresToFollow, p.PitfallsToAvoid, p.RelevantFacts} {
			for _, it := range items {
				r := f.byUUID[it.UUID]
				if it.Status == "archived" || it.Status == "superseded" || r != nil && r.retired() {
					fails.count()
					fails.add("agent %s goal %q: packet offers %s %q (status %q, retired by the fleet: %v)",
						j.agent, yearTopics[j.topic], it.UUID, it.Text, it.Status, r != nil && r.retired())
				}
			}
		}
		for _, r := range f.current(func(r *yearRec) bool { return r.visibleTo(j.agent) }) {
			var in []string
			var field string
			switch {
			case r.topic == j.topic && r.kind == journal.KindPreference:
				in, field = constraints, "hard_constraints"
			case r.topic == j.topic && r.kind == journal.KindProcedure:
				in, field = procedures, "procedures_to_follow"
			case r.tier == "core":
				in, field = coreIDs, "core"
			default:
				continue
			}
			fails.count()
			if !slices.Contains(in, r.uuid) {
				fails.addMemory(y, r, "agent %s goal %q: %s not in %s %v", j.agent, yearTopics[j.topic], r.uuid, field, in)
			}
		}
	})
	fails.report(t)
}

// checkFindable is assertion 2: a search, by its author, for a record's
// distinctive words and one ordinary word of it finds it in the top 3. It
// returns each found record's hit.
func (y *yearReader) checkFindable(t *testing.T, recs []*yearRec) map[string]searchHit {
	t.Helper()
	fails := &yearFailures{name: "2. current memories found in the top 3 by their words", total: len(recs)}
	var mu sync.Mutex
	found := map[string]searchHit{}
	yearParallel(recs, func(r *yearRec) {
		res, err := y.search(r.agent, r.query)
		if err != nil {
			fails.add("%s: %v", r.uuid, err)
			return
		}
		for i, h := range res.Results {
			if h.UUID == r.uuid {
				mu.Lock()
				found[r.uuid] = h
				mu.Unlock()
				if i < 3 {
					return
				}
				fails.addMemory(y, r, "search %q --agent %s: %s ranks %d, behind %v", r.query, r.agent, r.uuid, i+1, hitIDs(res)[:i])
				return
			}
		}
		fails.addMemory(y, r, "search %q --agent %s: %s not found (%d hits %v)", r.query, r.agent, r.uuid, len(res.Results), hitIDs(res))
	})
	fails.report(t)
	return found
}

// checkRetired is assertion 3: superseded and wrong-flagged records are
// out of default search and in search --all. It returns the --all hits.
func (y *yearReader) checkRetired(t *testing.T, recs []*yearRec) map[string]searchHit {
	t.Helper()
	fails := &yearFailures{name: "3. retired memories out of default search, in --all", total: len(recs)}
	var mu sync.Mutex
	found := map[string]searchHit{}
	yearParallel(recs, func(r *yearRec) {
		res, err := y.search(r.agent, r.query)
		if err != nil {
			fails.add("%s: %v", r.uuid, err)
			return
		}
		if slices.Contains(hitIDs(res), r.uuid) {
			fails.addMemory(y, r, "search %q --agent %s: retired %s is in default search", r.query, r.agent, r.uuid)
		}
		res, err = y.search(r.agent, r.query, "--all")
		if err != nil {
			fails.add("%s: %v", r.uuid, err)
			return
		}
		for _, h := range res.Results {
			if h.UUID == r.uuid {
				mu.Lock()
				found[r.uuid] = h
				mu.Unlock()
				// A superseded hit names its replacement (SPEC §7).
				if r.supersededBy != "" && h.ReplacedBy != r.supersededBy {
					fails.addMemory(y, r, "search %q --agent %s --all: superseded %s names replaced_by %q, want %s", r.query, r.agent, r.uuid, h.ReplacedBy, r.supersededBy)
				}
				return
			}
		}
		fails.addMemory(y, r, "search %q --agent %s --all: retired %s not found (%v)", r.query, r.agent, r.uuid, hitIDs(res))
	})
	fails.report(t)
	return found
}

// yearSnapshotLine is one memory as a snapshot lists it: "- (0.50, review)
// **fact** ts · agent · scope · `uuid` · path:line — text".
var yearSnapshotLine = regexp.MustCompile("^- \\(([0-9.]+)(?:, ([a-z]+))?\\) \\*\\*[a-z]+\\*\\* [^ ]+ · [^ ]+ · [^ ]+ · `([^`]+)`")

// yearSnapshot is what an agent's GRAPHITI_FACTS.md says of its memories.
type yearSnapshot struct {
	clock     time.Time
	listed    map[string][]yearSnapshotEntry
	truncated bool // some list ends with "… and N more"
}

type yearSnapshotEntry struct {
	importance float64
	status     string
}

func readYearSnapshot(repo, agent string) (*yearSnapshot, error) {
	path := core.Layout{Root: repo}.CacheDir(agent) + "/GRAPHITI_FACTS.md"
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := &yearSnapshot{listed: map[string][]yearSnapshotEntry{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if ts, ok := strings.CutPrefix(line, "- Newest memory: "); ok {
			ts, _, _ = strings.Cut(ts, " ")
			if s.clock, err = time.Parse(time.RFC3339Nano, ts); err != nil {
				return nil, fmt.Errorf("%s: newest memory: %v", path, err)
			}
		}
		if strings.HasPrefix(line, "… and ") {
			s.truncated = true
		}
		m := yearSnapshotLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		imp, _ := strconv.ParseFloat(m[1], 64)
		status := m[2]
		if status == "" {
			status = "active"
		}
		s.listed[m[3]] = append(s.listed[m[3]], yearSnapshotEntry{imp, status})
	}
	if s.clock.IsZero() {
		return nil, fmt.Errorf("%s: no \"Newest memory\" line", path)
	}
	return s, sc.Err()
}

// yearShowDoc is the part of show --json this test compares.
type yearShowDoc struct {
	Status     string   `json:"status"`
	Importance *float64 `json:"importance"`
}

// checkAgreement is assertion 4: explain, show, search (the hits already
// found) and the author's snapshot say the same importance and status of
// each memory of recs.
func (y *yearReader) checkAgreement(t *testing.T, fleet *yearFleet, recs []*yearRec, hits []map[string]searchHit) {
	t.Helper()
	showFails := &yearFailures{name: "4a. show agrees with explain", total: len(recs)}
	searchFails := &yearFailures{name: "4b. search --json agrees with explain"}
	snapFails := &yearFailures{name: "4c. the snapshot agrees with explain at its clock"}
	snaps := map[string]*yearSnapshot{}
	if !y.offline {
		for _, a := range yearAgents {
			s, err := readYearSnapshot(y.repo, a)
			if err != nil {
				t.Fatal(err)
			}
			snaps[a] = s
		}
	}
	if !y.offline {
		y.checkSnapshotDurable(t, snaps, fleet)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 0.0051 } // the snapshot prints two decimals
	snapshotKinds := []journal.Kind{journal.KindFact, journal.KindDecision, journal.KindPreference, journal.KindProcedure}
	yearParallel(recs, func(r *yearRec) {
		ex, err := y.explain(r)
		if err != nil {
			showFails.add("%s: %v", r.uuid, err)
			return
		}
		if ex.Offline != y.offline {
			showFails.add("%s: explain offline = %v", r.uuid, ex.Offline)
		}
		fail := func(f *yearFailures, format string, args ...any) {
			f.addMemory(y, r, "%s: %s", r.uuid, fmt.Sprintf(format, args...))
		}
		var sh yearShowDoc
		if err := y.decode(&sh, "show", r.uuid, "--agent", r.agent); err != nil {
			fail(showFails, "%v", err)
		} else if sh.Importance == nil || !near(*sh.Importance, ex.Importance) || sh.Status != ex.Status {
			imp := "none"
			if sh.Importance != nil {
				imp = fmt.Sprintf("%.2f", *sh.Importance)
			}
			fail(showFails, "show says importance %s status %q, explain %.2f %q", imp, sh.Status, ex.Importance, ex.Status)
		}
		for _, m := range hits {
			if h, ok := m[r.uuid]; ok {
				searchFails.count()
				if !near(h.Importance, ex.Importance) || h.Status != ex.Status {
					fail(searchFails, "search says importance %.2f status %s, explain %.2f %s", h.Importance, h.Status, ex.Importance, ex.Status)
				}
			}
		}
		s := snaps[r.agent]
		if s == nil || r.tier != "core" && !slices.Contains(snapshotKinds, r.kind) {
			return
		}
		snapFails.count()
		at, err := y.explain(r, "--as-of", s.clock.Format(time.RFC3339Nano))
		listed := s.listed[r.uuid]
		clock := s.clock.Format(time.RFC3339)
		switch {
		case err != nil:
			fail(snapFails, "%v", err)
		case at.Status == "archived" || at.Status == "superseded":
			if len(listed) > 0 {
				fail(snapFails, "the snapshot lists it %+v; explain at %s says %.2f %s", listed, clock, at.Importance, at.Status)
			}
		case len(listed) == 0:
			if !s.truncated {
				fail(snapFails, "the snapshot leaves it out; explain at %s says %.2f %s", clock, at.Importance, at.Status)
			}
		default:
			for _, e := range listed {
				if !near(e.importance, at.Importance) || e.status != at.Status {
					fail(snapFails, "the snapshot says %.2f %s; explain at %s %.2f %s", e.importance, e.status, clock, at.Importance, at.Status)
					break
				}
			}
		}
	})
	showFails.report(t)
	searchFails.report(t)
	snapFails.report(t)
}

// checkSnapshotDurable is assertion 4's corollary for snapshots (SPEC §7:
// durable memories stay in): every current preference, procedure and core
// memory an agent sees is in its snapshot, unless a list there is cut.
func (y *yearReader) checkSnapshotDurable(t *testing.T, snaps map[string]*yearSnapshot, fleet *yearFleet) {
	t.Helper()
	fails := &yearFailures{name: "4d. the snapshot lists every current preference, procedure and core memory"}
	for _, a := range yearAgents {
		s := snaps[a]
		if s.truncated {
			continue
		}
		for _, r := range fleet.current(func(r *yearRec) bool {
			return r.visibleTo(a) && (r.tier == "core" || r.kind == journal.KindPreference || r.kind == journal.KindProcedure)
		}) {
			fails.count()
			if len(s.listed[r.uuid]) == 0 {
				fails.addMemory(y, r, "agent %s's snapshot (clock %s) leaves out %s", a, s.clock.Format(time.RFC3339), r.uuid)
			}
		}
	}
	fails.report(t)
}
