package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"go.uber.org/zap"

	"github.com/memsync/memsync/ledger"
	"github.com/memsync/memsync/memsync"
)

const statusDescription = `Show, per agent: valid journal records, memories projected in the graph,
outbox entries waiting for the graph, rejected lines, and lag (the age of
the oldest record not yet projected). Works with or without a running
daemon, and when the graph is down (it says so). Lists what it does not read
under agents/ (symbolic links, misnamed files and directories), and why.
With an exchange (run --remote), also the remote: last exchange, commits
ahead and behind, a merge conflict left for a person, the last error.`

func runStatus(ctx context.Context, env *Env, args []string) int {
	fs := newRepoCmd(env, "status", "status [--json] [--repo DIR] [--graph embedded|neo4j] [flags]", statusDescription)
	asJSON := fs.Bool("json", false, "print one JSON document")
	repo, _, code, done := fs.load(args)
	if done {
		return code
	}
	cfg := &fs.cfg
	g, err := openGraph(ctx, cfg, repo, zap.NewNop())
	if err != nil {
		g = unreachable{err: err, identity: cfg.graph()}
	}
	defer g.Close()
	rep, remote, err := readStatus(ctx, repo, g, cfg, env.Now())
	if err != nil {
		return fs.fail("%v", err)
	}
	if *asJSON {
		var view *uiState
		if st, ok := readUIState(repo, rep.Daemon); ok {
			view = &st
		}
		out, _ := json.MarshalIndent(struct {
			memsync.StatusReport
			Remote  *ledger.ExchangeStatus `json:"remote,omitempty"`
			WebView *uiState               `json:"web_view,omitempty"`
		}{rep, remote, view}, "", "  ")
		fmt.Fprintf(env.Stdout, "%s\n", out)
		return exitOK
	}
	state := "reachable"
	if !rep.Graph.Reachable {
		state = "UNREACHABLE: " + rep.Graph.Error
	}
	fmt.Fprintf(env.Stdout, "graph: %s (%s), %s\n", rep.Graph.Backend, rep.Graph.Identity, state)
	fmt.Fprintf(env.Stdout, "daemon: %s\n", daemonLine(rep.Daemon))
	if st, ok := readUIState(repo, rep.Daemon); ok {
		fmt.Fprintf(env.Stdout, "web view: %s\n", uiStateLine(st))
	}
	if rep.AutoCommit != "" {
		fmt.Fprintf(env.Stdout, "auto-commit %s\n", rep.AutoCommit)
	}
	if remote != nil {
		fmt.Fprintf(env.Stdout, "remote: %s\n", remoteLine(remote, env.Now()))
	}
	fmt.Fprintln(env.Stdout)
	tw := tabwriter.NewWriter(env.Stdout, 0, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "agent\tjournal\tprojected\toutbox\trejects\tlag\t")
	for _, a := range rep.Agents {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.0fs\t\n", a.Agent, a.JournalRecords, a.Projected, a.Outbox, a.Rejects, a.LagSeconds)
	}
	tw.Flush()
	for _, ig := range rep.Ignored {
		fmt.Fprintf(env.Stdout, "ignored: %s: %s\n", ig.Path, ig.Reason)
	}
	rejects := 0
	for _, a := range rep.Agents {
		rejects += a.Rejects
		if a.Problem != "" {
			fmt.Fprintf(env.Stdout, "%s: %s\n", a.Agent, a.Problem)
		}
		if a.Future > 0 {
			fmt.Fprintf(env.Stdout, "%s: %d record(s) dated in the future (latest %s): searched as if written now\n",
				a.Agent, a.Future, a.LastFuture.Format(time.RFC3339))
		}
	}
	if rejects > 0 {
		fmt.Fprintf(env.Stdout, "\n%d rejected lines: memsync rejects lists them\n", rejects)
	}
	return exitOK
}

// readStatus is what status reports, from graph g: memsync.Status, the
// auto-commit's pause and the exchange with the remote (nil without one).
// The status command and the web view's fleet page both read it.
func readStatus(ctx context.Context, repo string, g memsync.Graph, cfg *Config, now time.Time) (memsync.StatusReport, *ledger.ExchangeStatus, error) {
	rep, err := memsync.Status(ctx, repo, g, cfg.graph(), now)
	if err != nil {
		return rep, nil, err
	}
	if why := ledger.HeadNotOnBranch(repo); why != "" {
		rep.AutoCommit = "paused: " + why
	}
	remote, err := ledger.RemoteStatus(ctx, repo)
	if err != nil {
		return rep, nil, err
	}
	return rep, remote, nil
}

// daemonLine is "running (pid N, since T)" or "not running".
func daemonLine(d memsync.DaemonStatus) string {
	if !d.Running {
		return "not running"
	}
	h := memsync.LockHolder{PID: d.PID, Command: d.Command, Since: d.Since}
	if d.Command != "" && d.Command != "run" {
		return "not running; " + h.String() + " holds the daemon lock"
	}
	return "running" + strings.TrimPrefix(h.String(), "a daemon")
}

// remoteLine is the exchange with the git remote in one line (SPEC §12):
// the last exchange, ahead/behind, a conflict left for a person, the last error.
func remoteLine(st *ledger.ExchangeStatus, now time.Time) string {
	var b strings.Builder
	if st.Upstream != "" && st.Upstream != st.Branch {
		fmt.Fprintf(&b, "%s → %s/%s, ", st.Branch, st.Remote, st.Upstream)
	} else {
		fmt.Fprintf(&b, "%s/%s, ", st.Remote, st.Branch)
	}
	if st.LastSuccess.IsZero() {
		b.WriteString("never exchanged")
	} else {
		fmt.Fprintf(&b, "last exchange %s (%s ago)", st.LastSuccess.Format(time.RFC3339), now.Sub(st.LastSuccess).Round(time.Second))
	}
	fmt.Fprintf(&b, ", %d ahead, %d behind", st.Ahead, st.Behind)
	if len(st.Conflicts) > 0 {
		fmt.Fprintf(&b, "\n  MERGE CONFLICT for a person to resolve and commit: %s", strings.Join(st.Conflicts, ", "))
	}
	if st.LastError != "" {
		fmt.Fprintf(&b, "\n  last error (%s): %s", st.LastAttempt.Format(time.RFC3339), st.LastError)
	}
	return b.String()
}
