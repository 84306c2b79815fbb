package cmdline

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// guideDir is docs/guide/ of the repository this package is in.
const guideDir = "../../../docs/guide"

// configKeys is every memsync.yaml key of t, dotted ("daemon.batch_size").
func configKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" {
			continue
		}
		if f.Type.Kind() == reflect.Struct && f.Type.PkgPath() == t.PkgPath() {
			keys = append(keys, configKeys(f.Type, prefix+tag+".")...)
			continue
		}
		keys = append(keys, prefix+tag)
	}
	return keys
}

// TestGuideCoversEveryCommandAndKey lists the commands that no page of
// docs/guide names ("memsync NAME") and the memsync.yaml keys that
// docs/guide/configuration.md does not give ("`key`").
func TestGuideCoversEveryCommandAndKey(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join(guideDir, "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no guide pages in %s (%v)", guideDir, err)
	}
	var guide strings.Builder
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		guide.Write(b)
	}
	for _, c := range Commands() {
		if !strings.Contains(guide.String(), "memsync "+c.Name) {
			t.Errorf("docs/guide names no %q", "memsync "+c.Name)
		}
	}
	config, err := os.ReadFile(filepath.Join(guideDir, "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range configKeys(reflect.TypeOf(Config{}), "") {
		if !strings.Contains(string(config), "`"+k+"`") {
			t.Errorf("docs/guide/configuration.md does not give `%s`", k)
		}
	}
}
