package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/memsync/memsync/cmd/internal/cmdline"
	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync"
	"github.com/memsync/memsync/memsync/read"
	"github.com/memsync/memsync/memsync/score"
)

const explainDescription = `Why a memory ranks where it does (SPEC §7): its importance, confidence,
status and max_age as they stand at --as-of (default now), each event that
moved its importance (references, outcomes, flags, contradictions, decay) and
the basis of its confidence. Agent A must be able to see the memory (shared,
or its own); one it may not see is reported exactly like an unknown uuid. A
record that A may not see still counts, but is named without its uuid,
author or time. When
the graph cannot be reached, the answer comes from the journals; when it
answers while journal records (feedback, outcomes, support among them) wait
to be projected, a note on stderr says how many.`

// explainEvent and explainResult are explain --json's document
// (cmdline.ExplainResult, which the MCP server's explain tool reads too).
type (
	explainEvent  = cmdline.ExplainEvent
	explainResult = cmdline.ExplainResult
)

func runExplain(ctx context.Context, env *Env, args []string) int {
	c := newRepoCmd(env, "explain", "explain UUID --agent A [--as-of T] [--json] [--repo DIR] [flags]", explainDescription)
	agent := c.String("agent", "", "the agent `A` asking (required): it sees shared memories and its own private ones")
	asOf := c.String("as-of", "", "answer as the memory stood at `T`, RFC 3339 (records after T left out, decay at T)")
	asJSON := c.Bool("json", false, "print one JSON document")
	positional, code, done := c.parse(args)
	if done {
		return code
	}
	switch {
	case len(positional) != 1:
		return c.usageErr("UUID: exactly one memory uuid expected, got %d", len(positional))
	case *agent == "":
		return c.usageErr("--agent: required")
	case !validAgent(*agent):
		return c.usageErr("--agent: %s", agentNameError(*agent))
	}
	clock, err := parseClock(*asOf, env.Now())
	if err != nil {
		return c.usageErr("--as-of: %v", err)
	}
	repo, err := existingRepo(env, *c.repoFlag)
	if err != nil {
		return c.usageErr("%v", err)
	}
	if err := loadConfig(env, repo, c.FlagSet, &c.cfg); err != nil {
		return c.usageErr("%v", err)
	}
	if code, done := knownAgent(c.cmdFlags, repo, *agent); done {
		return code
	}
	groups := journal.ReaderGroups(*agent)
	s, isOffline, reached, err := explainMemory(ctx, &c.cfg, repo, "explain", env.Stderr, positional[0], groups, clock)
	if errors.Is(err, read.ErrNotVisible) {
		return c.notFound(positional[0], *agent)
	}
	if err != nil {
		return c.fail("%v", err)
	}
	if reached {
		// Feedback, outcomes and support waiting in the journals move
		// nothing the graph answers with: say so, as every read does.
		hintUnprojected(env, "explain", repo, nil)
	}
	res := newExplainResult(s, clock.At, isOffline)
	if *asJSON {
		out, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintf(env.Stdout, "%s\n", out)
		return exitOK
	}
	// From the journals while the graph answers: the memory is not
	// projected yet, which is not the graph being unreachable.
	printExplain(env, res, isOffline && reached)
	return exitOK
}

// explainMemory scores memory uuid for a reader of groups at clock: from
// the graph, else (unreachable, or not projected yet) from the journals.
// explain and show both ask it, so they agree. reached says whether the
// graph could be asked (then journal records it has not been given yet
// are worth a hint: hintUnprojected).
func explainMemory(ctx context.Context, cfg *Config, repo, cmd string, stderr io.Writer, uuid string, groups []string,
	clock memsync.Clock) (s memsync.Scored, isOffline, reached bool, err error) {
	r := openReader(ctx, cfg, repo, cmd, stderr)
	defer r.Close()
	reached = !r.Offline
	s, err = read.ReadMissing(ctx, r, func(src memsync.Searcher) (memsync.Scored, error) {
		return read.Explain(ctx, src, uuid, groups, clock)
	}, func(_ memsync.Scored, err error) bool { return errors.Is(err, read.ErrNotVisible) })
	return s, r.Offline, reached, err
}

func newExplainResult(s memsync.Scored, asOf time.Time, isOffline bool) explainResult {
	tier := s.Tier
	if tier == "" {
		tier = "working"
	}
	res := explainResult{
		UUID: s.UUID, Agent: s.Agent, Kind: string(s.Kind), TS: s.TS.UTC().Format(time.RFC3339Nano), Text: s.Text,
		Importance: s.Result.Importance, Confidence: s.Result.Confidence, Status: string(s.Result.Status),
		Tier: tier, MaxAge: s.Result.MaxAgeLabel, AsOf: asOf.Format(time.RFC3339Nano), Offline: isOffline,
		Basis: s.Result.Basis, Events: []explainEvent{},
	}
	if s.Result.Status == score.Superseded {
		res.ReplacedBy = s.ReplacedBy
	}
	for _, e := range s.Result.Effects {
		ev := explainEvent{Kind: string(e.Kind), Effect: e.Text()}
		// A record the reader may not see is never named (score.Event.Named).
		if id, ts := e.Named(); !ts.IsZero() {
			ev.UUID, ev.TS = id, ts.UTC().Format(time.RFC3339Nano)
		}
		res.Events = append(res.Events, ev)
	}
	return res
}

func printExplain(env *Env, r explainResult, unprojected bool) {
	w := env.Stdout
	fmt.Fprintf(w, "%s  %s %s %s\n", r.UUID, r.Kind, r.TS, r.Agent)
	for _, l := range strings.Split(strings.TrimRight(r.Text, "\n"), "\n") {
		fmt.Fprintf(w, "   %s\n", l)
	}
	source := ""
	switch {
	case unprojected:
		source = " (not projected yet: from the journals)"
	case r.Offline:
		source = " (offline, from the journals)"
	}
	fmt.Fprintf(w, "as of %s%s\n", r.AsOf, source)
	fmt.Fprintf(w, "importance %.2f  confidence %.2f  status %s  tier %s  max_age %s\n", r.Importance, r.Confidence, r.Status, r.Tier, r.MaxAge)
	if r.ReplacedBy != "" {
		fmt.Fprintf(w, "replaced by %s\n", r.ReplacedBy)
	}
	fmt.Fprintln(w, "importance, from 0.50:")
	if len(r.Events) == 0 {
		fmt.Fprintln(w, "   no events")
	}
	// Columns as wide as their longest cell, so the effects line up
	// ("observation" and "(time not shown)" are wider than most).
	tsWidth, kindWidth := 0, 0
	for _, e := range r.Events {
		tsWidth, kindWidth = max(tsWidth, len(cmp.Or(e.TS, "(time not shown)"))), max(kindWidth, len(e.Kind))
	}
	for _, e := range r.Events {
		id := e.UUID
		if id == "" && e.Kind != "decay" {
			id = "(not visible to this agent)"
		}
		fmt.Fprintf(w, "   %-*s  %-*s  %s  %s\n", tsWidth, cmp.Or(e.TS, "(time not shown)"), kindWidth, e.Kind, e.Effect, id)
	}
	fmt.Fprintln(w, "confidence:")
	for _, b := range r.Basis {
		fmt.Fprintf(w, "   %s\n", b)
	}
}
