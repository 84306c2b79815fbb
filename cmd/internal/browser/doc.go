// Package browser drives memsync's web view in a real headless Chromium: it
// builds the memsync binaries, seeds a memory repository with real git and
// the real commands (three agents, shared and private memories, every edge
// type, decisions with and without an outcome, a core memory past its
// max_age, a script-injection record), projects it with `memsync sync`
// into the embedded store, serves it with `memsync ui` on a free loopback
// port and opens every page with chromedp, asserting on the DOM contract
// the pages keep (body data-page/data-viewer/data-source, .memory elements
// with data-uuid/data-group/data-agent, the page's own ids).
//
// The package holds tests only. Each test saves a full-page PNG of every
// page it opens into $MEMSYNC_SCREENSHOTS when set, else into a new
// temporary directory whose path the test logs, so a reviewer can look.
// `go test ./cmd/internal/browser -update` also writes one screenshot per
// page into docs/ui/ (at the repository root), the images the README shows.
//
// Chromium is $MEMSYNC_CHROMIUM, else the first of chromium,
// chromium-browser, google-chrome on PATH; scripts/test installs Debian's
// chromium. Without one the tests skip, saying "SKIPPED, not passed", or
// fail when MEMSYNC_REQUIRE_BROWSER=1 (scripts/test sets it). One Chromium,
// one seeded repository, one `memsync ui` and the daemon beside it (which
// projects what the pages journal) serve the whole test binary; each test
// opens its own tabs. The flag tests change the repository as a person
// would, so the tests run once per binary (-count=N>1 is not supported).
// Every tab fails its test when the page fetches anything from an address
// other than 127.0.0.1.
package browser
