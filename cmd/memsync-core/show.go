package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
	"github.com/memsync/memsync/memsync/score"
)

const showDescription = `Show one memory by its uuid, as agent A may see it: the whole record
(text, why, tags, entities, source, everything it carries), the journal file
and line it was projected from, its edges (links, supersedes, conflicts
with), its importance, confidence and status at --as-of (default now), as
explain computes them (active, review, archived, or superseded: when and by
which record), and where it was read: projected, not projected yet, or read
from the journals because the graph cannot be reached. Another agent's private memory is not found, exactly as a uuid
that does not exist (exit 3).`

// showJSON is the document show --json prints.
type showJSON struct {
	UUID string `json:"uuid"`
	// Record is the record's canonical encoding (SPEC §3 field names).
	Record  json.RawMessage `json:"record"`
	Path    string          `json:"path"`
	Line    int             `json:"line"`
	GroupID string          `json:"group_id"`
	// Status is SPEC §7's status at the clock, as explain computes it:
	// active, review, archived or superseded.
	Status string `json:"status"`
	// Projection is "projected", "not projected" (in a journal, not yet
	// in the graph) or "graph unreachable" (read from the journals).
	Projection string `json:"projection"`
	InvalidAt  string `json:"invalid_at,omitempty"`
	ReplacedBy string `json:"replaced_by,omitempty"`
	// Importance and Confidence are computed at the clock (SPEC §7), as
	// explain and search compute them.
	Importance    *float64 `json:"importance,omitempty"`
	Confidence    *float64 `json:"confidence,omitempty"`
	AsOf          string   `json:"as_of"`
	LinksTo       []string `json:"links_to"`
	Supersedes    []string `json:"supersedes"`
	ConflictsWith []string `json:"conflicts_with"`
	Mentions      []string `json:"mentions"`
	GraphError    string   `json:"graph_error,omitempty"`
}

// Where show found the memory (showJSON.Projection).
const (
	showProjected    = "projected"
	showNotProjected = "not projected"
	showUnreachable  = "graph unreachable"
)

func runShow(ctx context.Context, env *Env, args []string) int {
	fs := newRepoCmd(env, "show", "show UUID --agent A [--as-of T] [--json] [--repo DIR] [flags]", showDescription)
	agent := fs.String("agent", "", "the agent `A` reading (required): it sees shared memories and its own private ones")
	asOf := fs.String("as-of", "", "importance and status as they stood at `T`, RFC 3339 (default now)")
	asJSON := fs.Bool("json", false, "print one JSON document")
	positional, code, done := fs.parse(args)
	if done {
		return code
	}
	switch {
	case len(positional) != 1:
		return fs.usageErr("one UUID expected, got %d (see memsync show --help)", len(positional))
	case *agent == "":
		return fs.usageErr("--agent: required")
	case !validAgent(*agent):
		return fs.usageErr("--agent: %s", agentNameError(*agent))
	}
	clock, err := parseClock(*asOf, env.Now())
	if err != nil {
		return fs.usageErr("--as-of: %v", err)
	}
	// Parsed already: load only finds the repository and its configuration.
	repo, _, code, done := fs.load(nil)
	if done {
		return code
	}
	if code, done := knownAgent(fs.cmdFlags, repo, *agent); done {
		return code
	}
	uuid := positional[0]
	visible := func(group string) bool { return journal.Sees(*agent, group) }
	doc, found, err := showFromGraph(ctx, &fs.cfg, repo, uuid, visible)
	if err != nil {
		if ctx.Err() != nil {
			return fs.fail("%v", ctx.Err())
		}
		doc = showJSON{GraphError: err.Error()}
	}
	if !found {
		// Not in the graph (yet), or the graph cannot answer: the journals can.
		jdoc, ok, jerr := showFromJournals(repo, uuid, visible)
		if jerr != nil {
			return fs.fail("read journals: %v", jerr)
		}
		if !ok {
			return fs.notFound(uuid, *agent)
		}
		jdoc.Projection = showNotProjected
		if doc.GraphError != "" {
			jdoc.Projection, jdoc.GraphError = showUnreachable, doc.GraphError
			fmt.Fprintf(env.Stderr, "memsync show: graph unavailable (%v); read from the journals\n", oneLineErr(err))
		}
		doc = jdoc
	}
	if doc.GraphError == "" {
		hintUnprojected(env, "show", repo, nil)
	}
	// Importance and status as explain computes them, at the same clock.
	groups := journal.ReaderGroups(*agent)
	sc, _, _, serr := explainMemory(ctx, &fs.cfg, repo, "show", io.Discard, uuid, groups, clock)
	doc.AsOf = clock.At.Format(time.RFC3339Nano)
	switch {
	case serr == nil:
		imp, conf := sc.Result.Importance, sc.Result.Confidence
		doc.Importance, doc.Confidence, doc.Status = &imp, &conf, string(sc.Result.Status)
		doc.InvalidAt, doc.ReplacedBy = "", ""
		if sc.Result.Status == score.Superseded {
			doc.InvalidAt, doc.ReplacedBy = sc.InvalidAt.UTC().Format(time.RFC3339Nano), sc.ReplacedBy
		}
	case errors.Is(serr, read.ErrNotVisible):
		// Dated after --as-of: the record is shown, its status is not yet.
		doc.Importance, doc.Status = nil, "not yet written at --as-of"
	default:
		return fs.fail("score %s: %v", uuid, serr)
	}
	if *asJSON {
		out, _ := json.MarshalIndent(doc, "", "  ")
		fmt.Fprintf(env.Stdout, "%s\n", out)
		return exitOK
	}
	printShow(env.Stdout, doc)
	return exitOK
}

// showFromGraph looks uuid up in the graph; found is false when the graph
// lacks it or the reader may not see it (the two are not told apart).
func showFromGraph(ctx context.Context, cfg *Config, repo, uuid string, visible func(string) bool) (showJSON, bool, error) {
	g, err := openReadGraph(ctx, cfg, repo, zap.NewNop())
	if err != nil {
		return showJSON{}, false, fmt.Errorf("open %s graph: %w", cfg.graph(), err)
	}
	defer g.Close()
	nodes, err := g.Get(ctx, []string{uuid})
	if err != nil {
		return showJSON{}, false, fmt.Errorf("%s graph: %w", cfg.graph(), err)
	}
	n, ok := nodes[uuid]
	if !ok {
		return showJSON{}, false, nil
	}
	group := n.GroupID
	if group == "" {
		group = n.Record.GroupID()
	}
	if !visible(group) {
		return showJSON{}, false, nil
	}
	doc := newShowJSON(n.Memory, group)
	doc.Projection = showProjected
	doc.LinksTo, doc.Supersedes, doc.ConflictsWith, doc.Mentions = nonNil(n.LinksTo), nonNil(n.Supersedes), nonNil(n.ConflictsWith), nonNil(n.Mentions)
	return doc, true, nil
}

// showFromJournals finds uuid in the journals: the version that wins it
// (journal.ClashWins, as the graph projects it), shown only when the
// reader may see it. A losing version of a clash is never shown, whoever
// may read it (issue 51 §3).
func showFromJournals(repo, uuid string, visible func(string) bool) (showJSON, bool, error) {
	agents, err := listAgents(repo)
	if err != nil {
		return showJSON{}, false, err
	}
	var win memsync.Memory
	var winHash string
	found := false
	for _, a := range agents {
		err := memsync.EachRecord(layout(repo), a, func(m memsync.Memory) error {
			if m.UUID != uuid {
				return nil
			}
			h := m.Record.Hash()
			if !found || h != winHash && journal.ClashWins(journal.VersionOf(&m.Record, h), journal.VersionOf(&win.Record, winHash)) {
				win, winHash, found = m, h, true
			}
			return nil
		})
		if err != nil {
			return showJSON{}, false, err
		}
	}
	if !found || !visible(win.Record.GroupID()) {
		return showJSON{}, false, nil
	}
	r := newShowJSON(win, win.Record.GroupID())
	r.LinksTo, r.Supersedes, r.ConflictsWith = nonNil(r.LinksTo), nonNil(r.Supersedes), nonNil(r.ConflictsWith)
	return r, true, nil
}

func newShowJSON(m memsync.Memory, group string) showJSON {
	rec := m.Record
	return showJSON{UUID: rec.UUID, Record: json.RawMessage(rec.Canonical()), Path: m.Path, Line: m.Line, GroupID: group,
		LinksTo: nonNil(sortedCopy(rec.Links)), Supersedes: nonNil(sortedCopy(rec.Supersedes)),
		ConflictsWith: nonNil(sortedCopy(rec.ConflictsWith)), Mentions: nonNil(rec.AllEntities())}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// printShow writes one "field  value" line per field the record carries,
// then where it lives, its status and its edges.
func printShow(w io.Writer, doc showJSON) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s\t%s\n", k, v)
		}
	}
	rec, err := journal.Parse(doc.Record)
	if err != nil { // the canonical form always parses; say so if not
		line("record", string(doc.Record))
	} else {
		line("uuid", rec.UUID)
		line("ts", rec.TS.UTC().Format(time.RFC3339Nano))
		line("agent", rec.Agent)
		line("kind", string(rec.Kind))
		line("scope", fmt.Sprintf("%s (group %s)", rec.Scope, doc.GroupID))
		line("text", rec.Text)
		line("why", rec.Why)
		line("tags", strings.Join(rec.Tags, ", "))
		line("entities", strings.Join(rec.Entities, ", "))
		if s := rec.Source; s != nil {
			src := s.Type
			if s.Actor != "" {
				src += ", from " + s.Actor
			}
			if s.Context != "" {
				src += " (" + s.Context + ")"
			}
			line("source", strings.TrimPrefix(src, ", "))
		}
		for _, r := range rec.Refs {
			line("ref", strings.TrimSpace(r.Git+" "+r.Path))
		}
		line("confidence", rec.Confidence)
		line("max_age", rec.MaxAge)
		line("tier", rec.Tier)
		line("session", rec.Session)
		line("task", rec.Task)
		for _, k := range slices.Sorted(maps.Keys(rec.Extra)) {
			line(k, string(rec.Extra[k]))
		}
	}
	line("file", fmt.Sprintf("%s:%d", doc.Path, doc.Line))
	line("projection", doc.Projection)
	status := doc.Status
	if doc.Status == string(score.Superseded) {
		status = fmt.Sprintf("superseded at %s by %s", doc.InvalidAt, doc.ReplacedBy)
	}
	line("status", status+" (as of "+doc.AsOf+")")
	if doc.Importance != nil {
		line("importance", fmt.Sprintf("%.2f", *doc.Importance))
	}
	if doc.Confidence != nil {
		line("confidence", fmt.Sprintf("%.2f", *doc.Confidence))
	}
	line("links_to", strings.Join(doc.LinksTo, " "))
	line("supersedes", strings.Join(doc.Supersedes, " "))
	line("conflicts_with", strings.Join(doc.ConflictsWith, " "))
	line("mentions", strings.Join(doc.Mentions, ", "))
	tw.Flush()
}
