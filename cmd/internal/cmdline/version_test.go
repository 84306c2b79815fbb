package cmdline

import (
	"runtime/debug"
	"testing"
)

func TestVersionFrom(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build info", nil, false, "devel"},
		{"module version", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: rev}, true, "v1.2.3"},
		{"work tree build", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, true, "devel-0123456789ab+dirty"},
		{"clean work tree", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev[:1]}, true, "devel-0123456789ab"},
		{"no vcs", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "devel"},
	} {
		if got := versionFrom(tc.bi, tc.ok); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
