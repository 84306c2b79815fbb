package ledger

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 25 §5: a local branch whose upstream is another branch of the
// remote (master tracking origin/main) exchanges with that branch, as git
// does; an upstream on another remote, or a local one, is refused loudly
// (the error is in status) and nothing is pushed anywhere.
func TestExchangeFollowsTheUpstream(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// setup changes host h (a clone of remote on main, tracking
		// origin/main) the way a person would.
		setup    func(t *testing.T, h string)
		branch   string // the host's branch after setup
		refused  bool
		upstream string // the remote's branch the exchange must use
	}{
		{"a branch of another name tracking origin/main", func(t *testing.T, h string) {
			git(t, h, "branch", "-m", "main", "master") // keeps branch.master.merge=refs/heads/main
		}, "master", false, "main"},
		{"no upstream configured: the branch of the same name", func(t *testing.T, h string) {
			git(t, h, "branch", "--unset-upstream")
		}, "main", false, "main"},
		{"an upstream with no remote set (git's origin)", func(t *testing.T, h string) {
			git(t, h, "branch", "-m", "main", "work")
			git(t, h, "config", "--unset", "branch.work.remote")
		}, "work", false, "main"},
		{"an upstream on another remote", func(t *testing.T, h string) {
			other := filepath.Join(t.TempDir(), "other.git")
			git(t, h, "clone", "-q", "--bare", h, other)
			git(t, h, "remote", "add", "other", other)
			git(t, h, "fetch", "-q", "other")
			git(t, h, "branch", "--set-upstream-to=other/main")
		}, "main", true, ""},
		{"an upstream that is a local branch", func(t *testing.T, h string) {
			git(t, h, "branch", "base")
			git(t, h, "branch", "--set-upstream-to=base")
		}, "main", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			remote, hosts := remoteAndHosts(t, 2)
			h, peer := hosts[0], hosts[1]
			tc.setup(t, h)
			before := strings.TrimSpace(git(t, remote, "for-each-ref", "--format=%(refname) %(objectname)"))
			appendLine(t, h, "a", "from the first host", day)
			st, err := exchanger(t, h).ExchangeNow(ctx)
			status, serr := RemoteStatus(ctx, h)
			if serr != nil || status == nil {
				t.Fatalf("RemoteStatus = %+v, %v", status, serr)
			}
			if tc.refused {
				if !errors.Is(err, ErrUpstream) {
					t.Fatalf("exchange = %+v, %v; want ErrUpstream", st, err)
				}
				if after := strings.TrimSpace(git(t, remote, "for-each-ref", "--format=%(refname) %(objectname)")); after != before {
					t.Errorf("the remote changed though the exchange was refused:\n%s\nwas\n%s", after, before)
				}
				if !strings.Contains(status.LastError, ErrUpstream.Error()) {
					t.Errorf("status last error %q does not say why", status.LastError)
				}
				return
			}
			if err != nil {
				t.Fatalf("exchange: %v", err)
			}
			if st.Branch != tc.branch || st.Upstream != tc.upstream || st.RemoteBranch() != tc.upstream {
				t.Errorf("status names %s → %s, want %s → %s", st.Branch, st.Upstream, tc.branch, tc.upstream)
			}
			if heads := strings.Fields(git(t, remote, "for-each-ref", "--format=%(refname)", "refs/heads")); len(heads) != 1 || heads[0] != "refs/heads/"+tc.upstream {
				t.Errorf("remote branches %v, want only %s", heads, tc.upstream)
			}
			if got, want := strings.TrimSpace(git(t, remote, "rev-parse", "refs/heads/"+tc.upstream)), headOf(t, h); got != want {
				t.Errorf("remote %s at %s, want the host's HEAD %s", tc.upstream, got, want)
			}
			// The hosts meet: the peer (on main) gets the line, and sends one back.
			appendLine(t, peer, "a", "from the second host", day.Add(time.Second))
			exchange(t, exchanger(t, peer))
			exchange(t, exchanger(t, h))
			if a, b := journalLines(t, h), journalLines(t, peer); strings.Join(a, "\n") != strings.Join(b, "\n") || len(a) != 2 {
				t.Errorf("the hosts did not meet:\n%v\n%v", a, b)
			}
			status, _ = RemoteStatus(ctx, h)
			if status.Ahead != 0 || status.Behind != 0 || status.RemoteBranch() != tc.upstream {
				t.Errorf("status %+v: want 0 ahead, 0 behind of %s", status, tc.upstream)
			}
		})
	}
}
