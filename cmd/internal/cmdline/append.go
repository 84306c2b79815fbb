package cmdline

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memsync/memsync/journal"
	"github.com/memsync/memsync/memsync/surprise"
)

// appendFlagOf maps a record field to the flag (or argument) that sets it,
// so that a refused record is reported in the caller's terms.
var appendFlagOf = map[string]string{
	"ts": "--ts", "agent": "--agent", "kind": "--kind", "scope": "--scope", "text": "TEXT",
	"refs": "--ref-git/--ref-path", "entities": "--entity", "tags": "--tag", "links": "--link",
	"supersedes": "--supersedes", "conflicts_with": "--conflicts-with", "source": "--source-type",
	"confidence": "--confidence", "max_age": "--max-age", "tier": "--tier",
	"session": "--session", "task": "--task", "why": "--why",
}

// RunAppend is `memsync append`: it validates the record from its flags and
// TEXT (or stdin), appends it to the agent's journal for the record's UTC
// day under the journal's lock (fsynced unless --no-fsync or append.fsync:
// false) and prints its uuid, or {"uuid", "path"} with --json.
func RunAppend(ctx context.Context, env *Env, args []string) int {
	fs := NewFlags(env, "append", "append --agent A --kind K [--scope S] [--result R --link UUID] [--supports UUID] [flags] [TEXT | -]", `
Append one record to agent A's journal for today (UTC),
agents/A/memory/journal/YYYY-MM-DD.jsonl, and print its uuid
(mem_<ts>_<A>_<host>-<NNNN>-<random>: this clone's host id, a number
counting up, and a part no other agent can guess). TEXT is the memory itself; "-" reads it from stdin
(one trailing newline is dropped). The line is written whole under a lock and
fsynced, so any number of agents may append at once. --result records an
outcome (kind outcome) judging the decisions it --links to; --supports names
memories the record corroborates. A --tier learning
record passes the surprise gate first: scored against A's recent records,
0.4–0.7 is written with confidence low, below 0.4 is not written (exit 0;
it says why); corrections, contradictions, outcomes and --remember always
are, and --force writes anyway. Kinds: `+AgentKindList()+` (compaction,
feedback and promotion are memsync's own: memsync compact, flag, consolidate).`)
	repoFlag := AddRepoFlag(fs)
	var (
		rec                           journal.Record
		kind, scope, tsFlag           string
		refGit, refPath               string
		source                        journal.Source
		entities, tags, links, supers StringList
		conflicts                     StringList
		supports                      CommaList
		result                        string
		noFsync, asJSON, newAgent     bool
		force, remember               bool
		embedderFlag                  string
	)
	fs.StringVar(&rec.Agent, "agent", "", "the agent `A` writing the record (required)")
	fs.StringVar(&kind, "kind", "", "what the record is: `K` is one of the kinds above (required)")
	fs.StringVar(&scope, "scope", "private", "`S`: private (only A sees it) or shared (every agent does)")
	fs.Var(&entities, "entity", "an `entity` the record is about, e.g. @Shaun, #moonshot, \"Acme Corp\" (repeatable; @name, #tag and [[Wiki Link]] in TEXT are found anyway)")
	fs.Var(&tags, "tag", "a free topic `tag` (repeatable)")
	fs.Var(&links, "link", "`uuid` of a record this one builds on (repeatable)")
	fs.Var(&supers, "supersedes", "`uuid` of a record this one replaces (repeatable)")
	fs.Var(&conflicts, "conflicts-with", "`uuid` of a record this one contradicts (repeatable)")
	fs.Var(&supports, "supports", "`uuid` of a record this one corroborates, later evidence for it (repeatable, or comma-separated)")
	fs.StringVar(&result, "result", "", "an outcome's `result`: "+strings.Join(journal.Results, ", ")+"; it judges the decisions it --links to (implies --kind outcome)")
	fs.StringVar(&source.Type, "source-type", "", "how A knows, a `type`: experienced, told, read, inferred or observed")
	fs.StringVar(&source.Actor, "source-actor", "", "`who` it came from")
	fs.StringVar(&source.Context, "source-context", "", "`where` it came from")
	fs.StringVar(&rec.Confidence, "confidence", "", "declared confidence `level`: low, medium or high")
	fs.StringVar(&rec.MaxAge, "max-age", "", "how long it stays relevant, an `age`: 14d, 30d, 90d, 180d or permanent")
	fs.StringVar(&rec.Tier, "tier", "", "importance `tier`: core (never decays), working or learning")
	fs.StringVar(&embedderFlag, "embedder", "", "the surprise gate's `model` (a learning record's novelty compares meaning too): none, default (built in) or a model directory (default none; env MEMSYNC_EMBEDDER, config embedder)")
	fs.StringVar(&rec.Session, "session", "", "session `id`, for session-scoped recall")
	fs.StringVar(&rec.Task, "task", "", "task `id`, for task-scoped recall")
	fs.StringVar(&rec.Why, "why", "", "`why` this matters (decisions)")
	fs.StringVar(&refGit, "ref-git", "", "evidence: a git commit `sha`")
	fs.StringVar(&refPath, "ref-path", "", "evidence: a file `path`")
	fs.StringVar(&tsFlag, "ts", "", "record `time`, RFC 3339 (default now; for imports and tests; at most a day ahead)")
	fs.BoolVar(&noFsync, "no-fsync", false, "do not fsync the line (faster; a power cut may lose it); also append.fsync: false")
	fs.BoolVar(&newAgent, "new-agent", false, "create A's journal if memsync init never created agent A (else a mistyped --agent is refused); also append.create_agents: true")
	fs.BoolVar(&asJSON, "json", false, `print {"uuid": ..., "path": ...} instead of the uuid`)
	fs.BoolVar(&remember, "remember", false, "an explicit \"remember this\": remember: true, stored whatever the surprise gate says")
	fs.BoolVar(&force, "force", false, "write a learning-tier record even when the surprise gate would skip it")
	positional, code, done := fs.ParseArgs(args)
	if done {
		return code
	}

	// Usage first, before anything touches the disk.
	if rec.Agent == "" {
		return fs.UsageErr("--agent: required")
	}
	if !ValidAgent(rec.Agent) {
		return fs.UsageErr("--agent: %s", AgentNameError(rec.Agent))
	}
	if result != "" && kind == "" {
		kind = string(journal.KindOutcome)
	}
	if kind == "" {
		return fs.UsageErr("--kind: required (one of %s)", AgentKindList())
	}
	if k := journal.Kind(kind); k.Memsync() {
		return fs.UsageErr("--kind: %s records are written by memsync itself (%s), not appended (one of %s)",
			k, memsyncKindWriter[k], AgentKindList())
	}
	if msg := signalsError(journal.Kind(kind), result, links, supports, supers, conflicts); msg != "" {
		return fs.UsageErr("%s", msg)
	}
	switch len(positional) {
	case 0:
		return fs.UsageErr("TEXT: required (or - to read it from stdin)")
	case 1:
	default:
		return fs.UsageErr("one TEXT argument expected, got %d (quote the text)", len(positional))
	}
	rec.Kind, rec.Scope = journal.Kind(kind), journal.Scope(scope)
	rec.Entities, rec.Tags, rec.Links, rec.Supersedes, rec.ConflictsWith = entities, tags, links, supers, conflicts
	if source != (journal.Source{}) {
		rec.Source = &source
	}
	if refGit != "" || refPath != "" {
		rec.Refs = []journal.Ref{{Git: refGit, Path: refPath}}
	}
	if tsFlag != "" {
		ts, err := time.Parse(time.RFC3339Nano, tsFlag)
		if err != nil {
			return fs.UsageErr("--ts: %q is not an RFC 3339 time", tsFlag)
		}
		if ts.IsZero() {
			return fs.UsageErr("--ts: %q is the zero time, not a record's time", tsFlag)
		}
		if now := env.Now(); ts.After(now.Add(MaxFutureTS)) {
			return fs.UsageErr("--ts: %s is more than a day ahead of this host's clock (%s): a record is written when it happens",
				ts.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
		}
		rec.TS = ts
	}
	text := positional[0]
	if text == "-" {
		var err error
		if text, err = readText(env.Stdin); err != nil {
			return fs.UsageErr("TEXT: %v", err)
		}
	}
	rec.Text = text
	setExtra := func(field string, v any) {
		if rec.Extra == nil {
			rec.Extra = map[string]json.RawMessage{}
		}
		raw, _ := json.Marshal(v) // a bool, a string or strings
		rec.Extra[field] = raw
	}
	if remember {
		setExtra("remember", true)
	}
	if result != "" {
		setExtra(journal.FieldResult, result)
	}
	if len(supports) > 0 {
		setExtra(journal.FieldSupports, []string(supports))
	}
	// Everything is final but ts, which may still be unset (Append makes
	// it now): validate with a stand-in, before anything touches the disk.
	probe := rec
	if probe.TS.IsZero() {
		probe.TS = time.Now()
	}
	if err := probe.Validate(); err != nil {
		return fs.UsageErr("%s", describeFieldError(err))
	}

	repo, err := ExistingRepo(env, *repoFlag)
	if err != nil {
		return fs.UsageErr("%v", err)
	}
	var cfg Config
	if err := LoadConfig(env, repo, nil, &cfg); err != nil {
		// A broken memsync.yaml must not stop agents from journaling: the
		// record is written with the safe defaults (fsync on), and the
		// fault is named so that someone fixes it.
		fmt.Fprintf(env.Stderr, "memsync append: warning: %v; appending with the default settings\n", err)
		cfg = DefaultConfig()
	}
	if !newAgent && !cfg.Append.CreateAgents && !isAgent(repo, rec.Agent) {
		return fs.UsageErr("--agent: %s", unknownAgent(repo, rec.Agent))
	}
	if embedderFlag != "" {
		cfg.Embedder = embedderFlag
	}
	warn := func(format string, args ...any) {
		fmt.Fprintf(env.Stderr, "memsync append: warning: "+format+"\n", args...)
	}
	var emb Embedder
	if surprise.Gated(&rec) {
		// The gate compares meaning with the configured model; one that
		// cannot be had leaves it on words, never stops the write.
		if emb, err = ResolveEmbedder(env, cfg.Embedder); err != nil {
			warn("surprise gate: embedder: %v; comparing words only", err)
			emb = nil
		}
	}
	gate := applyGate(repo, &rec, emb, force, warn)
	if gate.skip {
		if asJSON {
			out, _ := json.Marshal(appendJSON{Skipped: true, Surprise: &gate.res.Score, Reason: gate.res.Reason})
			fmt.Fprintf(env.Stdout, "%s\n", out)
		} else {
			fmt.Fprintln(env.Stdout, gate.skippedText())
		}
		return ExitOK
	}
	host, err := journal.HostID(repo)
	if err != nil {
		return fs.Fail("%v", err)
	}
	opts := journal.AppendOptions{NoSync: noFsync || !cfg.Append.FSync, Now: env.Now,
		SequenceFile: filepath.Join(repo, sequenceFile(rec.Agent)), Root: repo, Host: host,
		Random: rand.Reader}
	path, err := journal.Append(filepath.Join(repo, journalDir(rec.Agent)), &rec, opts)
	if err != nil {
		var fe *journal.FieldError
		if errors.As(err, &fe) {
			return fs.UsageErr("%s", describeFieldError(err))
		}
		return fs.Fail("%v", err)
	}
	if asJSON {
		doc := appendJSON{UUID: rec.UUID, Path: filepath.ToSlash(filepath.Join(journalDir(rec.Agent), filepath.Base(path)))}
		if gate.res.Gated {
			doc.Surprise = &gate.res.Score
		}
		out, _ := json.Marshal(doc)
		fmt.Fprintf(env.Stdout, "%s\n", out)
		return ExitOK
	}
	fmt.Fprintln(env.Stdout, rec.UUID)
	return ExitOK
}

// appendJSON is the document append --json prints (SPEC §5): the record
// written, or what the surprise gate said of one it kept out.
type appendJSON struct {
	UUID     string   `json:"uuid"`
	Path     string   `json:"path"`
	Skipped  bool     `json:"skipped,omitempty"`
	Surprise *float64 `json:"surprise,omitempty"`
	Reason   string   `json:"reason,omitempty"`
}

// signalsError says why --result and --supports do not fit the rest of
// the record ("" when they do): a result is one of journal.Results, on an
// outcome that links to what it judges; every supported uuid is valid and
// neither superseded nor contradicted by the same record.
func signalsError(kind journal.Kind, result string, links, supports, supers, conflicts []string) string {
	if result != "" {
		switch {
		case !slices.Contains(journal.Results, result):
			return fmt.Sprintf("--result: %q is not one of %s", result, strings.Join(journal.Results, ", "))
		case kind != journal.KindOutcome:
			return fmt.Sprintf("--result: only an outcome has a result (--kind outcome, or leave --kind out), not a %s", kind)
		case len(links) == 0:
			return "--result: an outcome judges a decision: name it with --link UUID (repeatable)"
		}
	}
	for _, id := range supports {
		switch {
		case !journal.ValidUUID(id):
			return fmt.Sprintf("--supports: %q is not a valid uuid", id)
		case slices.Contains(conflicts, id):
			return fmt.Sprintf("--supports and --conflicts-with both name %s: a record cannot corroborate what it contradicts", id)
		case slices.Contains(supers, id):
			return fmt.Sprintf("--supports and --supersedes both name %s: a record cannot corroborate what it replaces", id)
		}
	}
	return ""
}

// readText reads the text from r, dropping one trailing newline. More than
// a journal line can hold is refused without reading it all.
func readText(r io.Reader) (string, error) {
	if r == nil {
		return "", errors.New("no stdin")
	}
	data, err := io.ReadAll(io.LimitReader(r, journal.MaxLineBytes+1))
	if err != nil {
		return "", fmt.Errorf("read stdin: %w", err)
	}
	if len(data) > journal.MaxLineBytes {
		return "", errors.New("stdin is over the 1 MiB line limit")
	}
	s := string(data)
	if strings.HasSuffix(s, "\r\n") {
		s = s[:len(s)-2]
	} else {
		s = strings.TrimSuffix(s, "\n")
	}
	return s, nil
}

// memsyncKindWriter names the command that writes each of memsync's own
// kinds, for append's refusal.
var memsyncKindWriter = map[journal.Kind]string{
	journal.KindCompaction: "memsync compact",
	journal.KindFeedback:   "memsync flag",
	journal.KindPromotion:  "the daemon, promoting a memory",
}

// describeFieldError names the flag behind a refused field:
// `--kind: unknown kind "bogus"`.
func describeFieldError(err error) string {
	var fe *journal.FieldError
	if !errors.As(err, &fe) {
		return err.Error()
	}
	name, ok := appendFlagOf[fe.Field]
	if !ok {
		return err.Error()
	}
	if fe.Field == "kind" {
		return name + ": " + fe.Reason + " (one of " + AgentKindList() + ")"
	}
	return name + ": " + fe.Reason
}

// isAgent reports whether agent's memory directory exists: memsync init
// created it (or an older memsync, or another tool, wrote its journal).
func isAgent(repo, agent string) bool {
	st, err := os.Stat(filepath.Join(repo, "agents", agent, "memory"))
	return err == nil && st.IsDir()
}

// unknownAgent says that agent is not one of repo's and how to add it
// (UnknownAgent, the rule of every command, and append's own way out).
func unknownAgent(repo, agent string) string {
	var names []string
	if entries, err := os.ReadDir(filepath.Join(repo, "agents")); err == nil {
		for _, e := range entries {
			if e.IsDir() && journal.ValidAgent(e.Name()) {
				names = append(names, e.Name())
			}
		}
	}
	return UnknownAgent(repo, agent, names) + "; to create it here, pass --new-agent " +
		"(append.create_agents: true in memsync.yaml allows any)"
}

// journalDir is agent's journal directory relative to the repository
// (SPEC §2): memsync.Layout.JournalDir, which this package cannot call
// without linking the engine and its dependencies into the front binary.
// TestJournalDirIsTheLayouts keeps the two equal.
func journalDir(agent string) string { return filepath.Join("agents", agent, "memory", "journal") }

// sequenceFile is agent's uuid high-water file relative to the repository:
// memsync.Layout.SequenceFile, kept equal by TestJournalDirIsTheLayouts.
func sequenceFile(agent string) string { return filepath.Join(".memsync", "sequence", agent) }

// MaxFutureTS is how far ahead of the host's clock append --ts may date a
// record (SPEC §7 "The clock": more is a typo, not another host's drift).
const MaxFutureTS = 24 * time.Hour
