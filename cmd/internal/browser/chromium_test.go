package browser

import (
	"strings"
	"testing"
)

// TestNoChromiumSkipsOrFails: without a browser the tests skip and say why,
// or fail under MEMSYNC_REQUIRE_BROWSER=1; never pass silently.
func TestNoChromiumSkipsOrFails(t *testing.T) {
	for _, tc := range []struct {
		name, chromium, path, require string
		wantSkip, wantErr             string
	}{
		{"none on PATH", "", t.TempDir(), "", "no Chromium found", ""},
		{"none on PATH, required", "", t.TempDir(), "1", "", "MEMSYNC_REQUIRE_BROWSER=1: no Chromium found"},
		{"MEMSYNC_CHROMIUM missing", "/nonexistent/chromium", t.TempDir(), "", "MEMSYNC_CHROMIUM=/nonexistent/chromium", ""},
		{"MEMSYNC_CHROMIUM missing, required", "/nonexistent/chromium", t.TempDir(), "1", "", "MEMSYNC_CHROMIUM=/nonexistent/chromium"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("MEMSYNC_CHROMIUM", tc.chromium)
			t.Setenv("PATH", tc.path)
			t.Setenv("MEMSYNC_REQUIRE_BROWSER", tc.require)
			path, skip, err := chromiumOrSkip()
			if path != "" {
				t.Errorf("found %s", path)
			}
			if (tc.wantSkip == "") != (skip == "") || !strings.Contains(skip, tc.wantSkip) {
				t.Errorf("skip %q, want one saying %q", skip, tc.wantSkip)
			}
			if (tc.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("err %v, want one saying %q", err, tc.wantErr)
			}
		})
	}
}
