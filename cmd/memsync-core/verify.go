package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"go.uber.org/zap"

	"github.com/memsync/memsync/memsync"
)

const verifyDescription = `Compare the journals (work tree, archives included) with the graph:
memories missing from the graph, extra ones no journal has, and ones whose
content differs. Every journal line is accounted for: projected, a
duplicate of a projected record, rejected (with a reason), or unaccounted
(it should be in the graph and is not). A uuid that lines claim with
different content is a conflict: one version of an agent's memory is not
in the graph. A line its journal can never project (bad JSON, written as
another agent, or under a uuid that names another agent: squatting) is a
rejected line, named with its reason, and is no conflict: the uuid stands
for its owner's record. Exit 0 when the graph holds exactly what the
journals project, every line is accounted for and no uuid is in conflict,
whatever lines were rejected; 1 otherwise, or when the graph cannot be
read. References that change nothing (SPEC §7: a link, support,
contradiction or supersession naming a uuid no journal holds, or another
agent's private memory) are counted and sampled for the repository's
owner, by kind (the field naming the target, and why it changes nothing)
with a count and a few examples; --all lists every one. They do not change
the exit code. The journals are read once: what the comparison needs of
each line is spilled to unlinked files (in the repository's .memsync, else
$TMPDIR), then compared in parts of the uuids when the journals are large
(--parts sets how many), so that memory stays bounded; a spill directory
that cannot be written, or fills, fails the verify.`

func runVerify(ctx context.Context, env *Env, args []string) int {
	fs := newRepoCmd(env, "verify", "verify [--json] [--repo DIR] [--graph embedded|neo4j] [flags]", verifyDescription)
	asJSON := fs.Bool("json", false, "print one JSON document")
	all := fs.Bool("all", false, "list every reference that changes nothing (with --json: in blocked_all)")
	parts := fs.Int("parts", 0, "compare the uuids in this many parts, one after the other (0: by the journals' size)")
	repo, _, code, done := fs.load(args)
	if done {
		return code
	}
	cfg := &fs.cfg
	g, err := openGraph(ctx, cfg, repo, zap.NewNop())
	if err != nil {
		return fs.fail("open graph: %v", err)
	}
	defer g.Close()
	opts := memsync.VerifyOptions{Parts: *parts, SpillDir: spillDir(repo), References: true}
	if *all {
		opts.Listing = &memsync.ReferenceListing{}
		defer opts.Listing.Close()
	}
	rep, refs, err := memsync.VerifyAll(ctx, repo, g, opts)
	if err != nil {
		return fs.fail("%v", err)
	}
	out := bufio.NewWriterSize(env.Stdout, 64<<10)
	if *asJSON {
		doc, _ := json.MarshalIndent(struct {
			memsync.VerifyReport
			memsync.ReferenceReport
		}{rep, refs}, "", "  ")
		if opts.Listing == nil || refs.Dangling+refs.Crossing == 0 {
			fmt.Fprintf(out, "%s\n", doc)
		} else {
			// blocked_all is streamed, as json.MarshalIndent would
			// have laid it out last in the document.
			out.Write(bytes.TrimSuffix(doc, []byte("\n}")))
			out.WriteString(",\n  \"blocked_all\": [")
			sep := "\n    "
			err = opts.Listing.Each(func(_, _, source, target string) error {
				s, _ := json.Marshal(source + " -> " + target)
				out.WriteString(sep)
				_, err := out.Write(s)
				sep = ",\n    "
				return err
			})
			out.WriteString("\n  ]\n}\n")
		}
	} else {
		verdict := "ok"
		if !rep.OK {
			verdict = "DIFFERS"
		}
		fmt.Fprintf(out, "%s: %d journal records, %d in the graph; missing %d, extra %d, different %d, conflicts %d\n",
			verdict, rep.JournalRecords, rep.GraphRecords, rep.Missing, rep.Extra, rep.Different, rep.Conflicts)
		fmt.Fprintf(out, "lines %d: projected %d, duplicates %d, rejected %d, unaccounted %d\n",
			rep.Lines, rep.Projected, rep.Duplicates, rep.Rejected, rep.Unaccounted)
		for _, l := range []struct {
			name string
			ids  []string
		}{{"missing", rep.MissingUUIDs}, {"extra", rep.ExtraUUIDs}, {"different", rep.DifferentUUIDs}, {"conflicts", rep.ConflictUUIDs}} {
			if len(l.ids) > 0 {
				fmt.Fprintf(out, "  %s: %s\n", l.name, strings.Join(l.ids, " "))
			}
		}
		for _, r := range rep.RejectedLines {
			fmt.Fprintf(out, "  rejected %s:%d: %s\n", r.File, r.Line, r.Reason)
		}
		if n, err := rejectCount(repo); err == nil && n > 0 {
			fmt.Fprintf(out, "  rejects: %d journal lines can never be projected (memsync rejects lists them)\n", n)
		}
		if refs.Dangling+refs.Crossing > 0 {
			more := " (--all lists every one)"
			if *all {
				more = ""
			}
			fmt.Fprintf(out, "  references that change nothing: %d to no record, %d to a memory the writer cannot see%s\n",
				refs.Dangling, refs.Crossing, more)
			for _, k := range refs.ByKind {
				fmt.Fprintf(out, "    %s %s: %d, e.g. %s\n", k.Field, k.Blocked, k.Count, strings.Join(k.Sample, ", "))
			}
			if opts.Listing != nil {
				err = opts.Listing.Each(func(field, blocked, source, target string) error {
					_, err := fmt.Fprintf(out, "    %s %s: %s -> %s\n", field, blocked, source, target)
					return err
				})
			}
		}
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return fs.fail("list references: %v", err)
	}
	if !rep.OK {
		return exitFail
	}
	return exitOK
}

// spillDir is where verify spills: the repository's local directory (the
// disk that holds the journals, as rebuild's tally), else os.TempDir().
func spillDir(repo string) string {
	dir := layout(repo).LocalDir()
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
		return dir
	}
	return ""
}
