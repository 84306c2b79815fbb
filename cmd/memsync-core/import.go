package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/journal/importer"
)

const importDescription = `Bring memory kept elsewhere into agent A's journal. FORMAT is one of
openclaw (a workspace: MEMORY.md and memory/YYYY-MM-DD.md), vault (vault/ and
archive/ obs-YYYY-MM-DD-NNN.md), tiers (a memory/ directory of core/, working/,
learning/), basic-memory (a folder of notes), mcp-memory (memory.jsonl), mem0
(a Mem0 / OpenMemory export) or jsonl (memsync's own export, or journal files:
each record re-owned to A, its old uuid kept as origin_uuid, links and
supersedes rewritten to the copies of their targets; a record another agent
kept private is skipped, and reported, unless --include-private moves it,
private to A).
Every memory becomes one journal record written
as memsync append writes it, with a uuid derived from the source (its id, else
its file and content): importing the same source again writes nothing, an
edited source writes only what changed (an edited item with an id supersedes
its earlier import), and an import stopped part-way is completed by running it
again. Records keep the source's dates and name it in source.context; a
declared importance is never imported. The report lists what was imported,
skipped (and why) and could not be parsed (file:line); exit 1 when something
could not be parsed (the rest is imported).`

// importJSON is the document import --json prints.
type importJSON struct {
	*importer.Report
	SkippedByReason map[string]int `json:"skipped_by_reason"`
}

func runImport(ctx context.Context, env *Env, args []string) int {
	c := newFlags(env, "import", "import FORMAT PATH --agent A [--scope S] [--source-type T] [--prune] [--include-private] [--dry-run] [--json]", importDescription)
	repoFlag := addRepoFlag(c)
	agent := c.String("agent", "", "the agent `A` whose journal receives the memories (required)")
	scope := c.String("scope", "private", "`S`: private (only A sees them) or shared (every agent does)")
	sourceType := c.String("source-type", "read", "source.type of the records, a `type`: read (default) or told, experienced, observed, inferred")
	prune := c.Bool("prune", false, "also retire earlier imports of this format whose items the source no longer holds (for a source that is all you imported in this format and scope)")
	includePrivate := c.Bool("include-private", false, "jsonl: also import the records another agent kept private, private to A (moving an agent under a new name); without it they are skipped and reported")
	dryRun := c.Bool("dry-run", false, "parse and report, write nothing")
	asJSON := c.Bool("json", false, "print one JSON document")
	positional, code, done := c.parse(args)
	if done {
		return code
	}
	switch {
	case len(positional) != 2:
		return c.usageErr("FORMAT PATH: expected 2 arguments, got %d (formats: %s)", len(positional), strings.Join(importer.Formats(), ", "))
	case !slices.Contains(importer.Formats(), positional[0]):
		return c.usageErr("FORMAT: unknown format %q (one of %s)", positional[0], strings.Join(importer.Formats(), ", "))
	case *agent == "":
		return c.usageErr("--agent: required")
	case !validAgent(*agent):
		return c.usageErr("--agent: %s", agentNameError(*agent))
	case *scope != string(journal.ScopePrivate) && *scope != string(journal.ScopeShared):
		return c.usageErr("--scope: %q is not private or shared", *scope)
	case !slices.Contains(journal.SourceTypes, *sourceType):
		return c.usageErr("--source-type: %q is not one of %s", *sourceType, strings.Join(journal.SourceTypes, ", "))
	}
	format, src := positional[0], positional[1]
	if _, err := os.Stat(src); err != nil {
		return c.usageErr("PATH: %v", err)
	}
	repo, err := existingRepo(env, *repoFlag)
	if err != nil {
		return c.usageErr("%v", err)
	}
	var cfg Config
	if err := loadConfig(env, repo, nil, &cfg); err != nil {
		return c.usageErr("%v", err)
	}
	if _, err := os.Stat(memoryDir(repo, *agent)); err != nil && !cfg.Append.CreateAgents {
		return c.usageErr("--agent: no agent %q in this repository (memsync init --agent %s creates it)", *agent, *agent)
	}
	opts := importer.Options{
		Format: format, Path: src, Agent: *agent, Scope: journal.Scope(*scope), SourceType: *sourceType,
		Root: repo, JournalDir: journalDir(repo, *agent), Journals: func() ([]string, error) { return layout(repo).JournalFiles(*agent) },
		LockFile: filepath.Join(localDir(repo), "import", *agent+".lock"),
		Prune:    *prune, IncludePrivate: *includePrivate,
		DryRun: *dryRun, NoSync: !cfg.Append.FSync, Now: env.Now,
	}
	// The shared memories A sees are already there for a round trip.
	opts.SharedJournals = func() ([]string, error) { return otherJournals(repo, *agent) }
	if f, ok := env.Stderr.(*os.File); ok && isTerminal(f) {
		last := -1
		opts.Progress = func(done, total int) {
			if pct := done * 100 / max(total, 1); pct != last || done == total {
				last = pct
				fmt.Fprintf(f, "\rimporting %s: %d/%d records", format, done, total)
				if done == total {
					fmt.Fprintln(f)
				}
			}
		}
	}
	rep, err := importer.Import(ctx, opts)
	if err != nil && rep == nil {
		return c.fail("%v", err)
	}
	printImport(env.Stdout, rep, *asJSON)
	if err != nil {
		return c.fail("%v (run the same import again to complete it)", err)
	}
	if len(rep.Unparsable) > 0 {
		return exitFail
	}
	return exitOK
}

func skippedByReason(rep *importer.Report) map[string]int {
	m := map[string]int{}
	for _, s := range rep.Skipped {
		m[s.Reason]++
	}
	return m
}

// printImport prints the report: counts, then every item skipped for
// another reason than being imported already, and every problem.
func printImport(w io.Writer, rep *importer.Report, asJSON bool) {
	if asJSON {
		if rep.Skipped == nil {
			rep.Skipped = []importer.Skip{}
		}
		if rep.Unparsable == nil {
			rep.Unparsable = []importer.Problem{}
		}
		if rep.Unresolved == nil {
			rep.Unresolved = []importer.Skip{}
		}
		if rep.Files == nil {
			rep.Files = []string{}
		}
		out, _ := json.Marshal(importJSON{Report: rep, SkippedByReason: skippedByReason(rep)})
		fmt.Fprintf(w, "%s\n", out)
		return
	}
	verb := "imported"
	if rep.DryRun {
		verb = "would import"
	}
	fmt.Fprintf(w, "%s %s into %s: %s %s", rep.Format, rep.Path, rep.Agent, verb, plural(rep.Imported, "memory"))
	if rep.Verified > 0 {
		fmt.Fprintf(w, " (%d marked verified by the source, kept as metadata)", rep.Verified)
	}
	if rep.Superseded > 0 {
		fmt.Fprintf(w, " (superseding %d earlier versions)", rep.Superseded)
	}
	if rep.Retired > 0 {
		retire := "retired"
		if rep.DryRun {
			retire = "would retire"
		}
		fmt.Fprintf(w, "; %s %d removed from the source", retire, rep.Retired)
	}
	fmt.Fprintf(w, "; skipped %d; could not parse %d\n", len(rep.Skipped), len(rep.Unparsable))
	reasons := skippedByReason(rep)
	keys := make([]string, 0, len(reasons))
	for k := range reasons {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(w, "  skipped %d: %s\n", reasons[k], k)
	}
	for _, s := range rep.Skipped {
		if s.Reason != importer.SkipAlreadyImported {
			fmt.Fprintf(w, "  skipped %s: %s\n", s.Source, s.Reason)
		}
	}
	for _, s := range rep.Unresolved {
		fmt.Fprintf(w, "  %s: %s (kept without it)\n", s.Source, s.Reason)
	}
	for _, p := range rep.Unparsable {
		fmt.Fprintf(w, "  could not parse %s\n", p)
	}
	for _, f := range rep.Files {
		fmt.Fprintf(w, "  wrote %s\n", f)
	}
}

// otherJournals lists the journal files of every agent of repo but agent:
// where the shared memories agent sees, not its own, are.
func otherJournals(repo, agent string) ([]string, error) {
	l := layout(repo)
	agents, err := l.Agents()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range agents {
		if a == agent {
			continue
		}
		files, err := l.JournalFiles(a)
		if err != nil {
			return nil, err
		}
		out = append(out, files...)
	}
	return out, nil
}
