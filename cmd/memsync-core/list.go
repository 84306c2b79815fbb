package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
)

const listDescription = `The newest memories agent A may see, newest first: shared memories
(CONSTELLATION) and A's own private ones (AGENT:A), never another agent's
private ones (the visibility of search). Not ranked and not filtered by
status: every record A may see, superseded and archived ones included, in
the order they were written (ts, then uuid, descending). From the graph;
when the graph cannot be reached, from the journals themselves, with
"offline": true and a note on stderr. The answer says which ("source":
"graph" or "journals").`

// listDefaultLimit is how many memories list prints without --limit.
const listDefaultLimit = 20

// listItem is one memory as list --json prints it.
type listItem struct {
	UUID    string          `json:"uuid"`
	Agent   string          `json:"agent"`
	Kind    string          `json:"kind"`
	TS      string          `json:"ts"`
	Scope   string          `json:"scope"`
	Text    string          `json:"text"`
	Why     string          `json:"why,omitempty"`
	Tags    []string        `json:"tags,omitempty"`
	Task    string          `json:"task,omitempty"`
	Session string          `json:"session,omitempty"`
	Source  *journal.Source `json:"source,omitempty"`
	Path    string          `json:"path"`
	Line    int             `json:"line"`
}

// listResult is the document list --json prints.
type listResult struct {
	Agent   string     `json:"agent"`
	Source  string     `json:"source"` // "graph" or "journals"
	Offline bool       `json:"offline"`
	Reason  string     `json:"offline_reason,omitempty"`
	Results []listItem `json:"results"`
}

func runList(ctx context.Context, env *Env, args []string) int {
	c := newRepoCmd(env, "list", "list --agent A [--kind K]... [--since T] [--limit N] [--json] [--repo DIR] [flags]", listDescription)
	agent := c.String("agent", "", "the agent `A` reading (required): it sees shared memories and its own private ones")
	var kinds stringList
	c.Var(&kinds, "kind", "only memories of kind `K` (repeatable, or comma-separated): "+kindList())
	since := c.String("since", "", "only memories at or after `T`: RFC 3339 time, a date (2026-11-20), or an age (36h, 7d)")
	limit := c.Int("limit", listDefaultLimit, "at most `N` memories")
	asJSON := c.Bool("json", false, "print one JSON document")
	positional, code, done := c.parse(args)
	if done {
		return code
	}
	switch {
	case len(positional) > 0:
		return c.usageErr("unexpected argument %q", positional[0])
	case *agent == "":
		return c.usageErr("--agent: required")
	case !validAgent(*agent):
		return c.usageErr("--agent: %s", agentNameError(*agent))
	case *limit < 1:
		return c.usageErr("--limit: must be at least 1, not %d", *limit)
	}
	q := memsync.ListQuery{Groups: journal.ReaderGroups(*agent), Limit: *limit}
	for _, list := range kinds {
		for _, k := range strings.Split(list, ",") {
			k = strings.TrimSpace(k)
			if !journal.Kind(k).Valid() {
				return c.usageErr("--kind: unknown kind %q (one of %s)", k, kindList())
			}
			q.Kinds = append(q.Kinds, journal.Kind(k))
		}
	}
	var from time.Time
	if *since != "" {
		t, err := parseSince(*since, env.Now())
		if err != nil {
			return c.usageErr("--since: %v", err)
		}
		from = t
	}
	repo, _, code, done := c.load(nil)
	if done {
		return code
	}
	if code, done := knownAgent(c.cmdFlags, repo, *agent); done {
		return code
	}

	r := openReader(ctx, &c.cfg, repo, "list", env.Stderr)
	defer r.Close()
	nodes, err := read.Read(ctx, r, func(s memsync.Searcher) ([]memsync.Node, error) { return listFrom(ctx, s, q) })
	if err != nil {
		return c.fail("%v", err)
	}
	isOffline, reason := r.Offline, r.Reason
	if !isOffline {
		hintUnprojected(env, "list", repo, r.From)
	}
	res := listResult{Agent: *agent, Source: "graph", Offline: isOffline, Reason: reason, Results: []listItem{}}
	if isOffline {
		res.Source = "journals"
	}
	for _, n := range nodes {
		// Newest first: those before --since are a tail, cut here so that
		// the answer is the newest --limit at or after it.
		if !from.IsZero() && n.TS.Before(from) {
			break
		}
		res.Results = append(res.Results, listItem{
			UUID: n.UUID, Agent: n.Agent, Kind: string(n.Kind), TS: n.TS.UTC().Format(time.RFC3339Nano),
			Scope: string(n.Scope), Text: n.Text, Why: n.Why, Tags: n.Tags, Task: n.Task, Session: n.Session,
			Source: n.Record.Source, Path: n.Path, Line: n.Line,
		})
	}
	if *asJSON {
		out, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintf(env.Stdout, "%s\n", out)
		return exitOK
	}
	printList(env, res)
	return exitOK
}

// listFrom asks r for q's memories: the graphs and the journals are all
// Listers.
func listFrom(ctx context.Context, r memsync.Searcher, q memsync.ListQuery) ([]memsync.Node, error) {
	l, ok := r.(memsync.Lister)
	if !ok {
		return nil, fmt.Errorf("%T cannot list memories", r)
	}
	return l.List(ctx, q)
}

// printList writes the human-readable answer: where it came from, then a
// header line per memory and its text indented.
func printList(env *Env, res listResult) {
	w := env.Stdout
	fmt.Fprintf(w, "%s visible to %s, newest first (from the %s)\n", plural(len(res.Results), "memory"), res.Agent, res.Source)
	for _, m := range res.Results {
		shared := ""
		if m.Scope == string(journal.ScopeShared) {
			shared = " shared"
		}
		fmt.Fprintf(w, "\n%s %s %s%s  %s:%d  %s\n", m.TS, m.Kind, m.Agent, shared, m.Path, m.Line, m.UUID)
		for _, l := range strings.Split(strings.TrimRight(m.Text, "\n"), "\n") {
			fmt.Fprintf(w, "   %s\n", strings.TrimRight(l, "\r"))
		}
	}
}
