package cmdline

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is set at build time:
//
//	go build -ldflags "-X github.com/memsync/memsync/cmd/internal/cmdline.version=v1.2.3" ./cmd/...
//
// Empty, Version falls back on what the Go toolchain recorded.
var version = ""

// Version is this build's version: the one set at build time, else the
// module version with the VCS revision the toolchain recorded (a "+dirty"
// suffix when the work tree had changes), else "devel".
func Version() string {
	if version != "" {
		return version
	}
	return versionFrom(debug.ReadBuildInfo())
}

func versionFrom(bi *debug.BuildInfo, ok bool) string {
	if !ok {
		return "devel"
	}
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" && v == "devel" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		v += "-" + rev
		if modified == "true" {
			v += "+dirty"
		}
	}
	return v
}

// IsVersion reports whether arg asks for the version ("version",
// "--version", "-version"): git, go and kubectl take the word too.
func IsVersion(arg string) bool { return arg == "version" || arg == "--version" || arg == "-version" }

// PrintVersion writes "memsync VERSION (GOVERSION OS/ARCH)".
func PrintVersion(w io.Writer) {
	fmt.Fprintf(w, "memsync %s (%s %s/%s)\n", Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
