package tests

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docFiles are the Markdown pages of the repository, relative to its root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "API_SPECIFICATION.md"}
	pages, err := filepath.Glob("../docs/*.md")
	require.NoError(t, err)
	require.NotEmpty(t, pages)
	for _, p := range pages {
		files = append(files, strings.TrimPrefix(filepath.ToSlash(p), "../"))
	}
	return files
}

// prose returns a Markdown text without its fenced code blocks and code
// spans, which hold no links.
func prose(text string) string {
	var b strings.Builder
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			b.WriteString("\n")
			continue
		}
		if fenced {
			b.WriteString("\n")
			continue
		}
		b.WriteString(regexp.MustCompile("`[^`]*`").ReplaceAllString(line, "``"))
		b.WriteString("\n")
	}
	return b.String()
}

// anchors returns the anchors GitHub gives the headings of a Markdown text:
// lower case, punctuation dropped, spaces as hyphens, "-1", "-2", … after
// repeats.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var slug strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
				slug.WriteRune(r)
			case r == ' ':
				slug.WriteRune('-')
			}
		}
		s := slug.String()
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// Every relative link of the README, the specification and docs/ names a
// file or directory that exists, and every #anchor a heading of its page.
func TestDocLinksResolve(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]*)\)`)
	for _, file := range docFiles(t) {
		raw, err := os.ReadFile(filepath.Join("..", file))
		require.NoError(t, err)
		for _, m := range link.FindAllStringSubmatch(prose(string(raw)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			require.NotEmpty(t, target, "%s: a link with no target", file)
			path, anchor, _ := strings.Cut(target, "#")
			page := file
			if path != "" {
				page = filepath.ToSlash(filepath.Join(filepath.Dir(file), path))
				if _, err := os.Stat(filepath.Join("..", page)); !assert.NoError(t, err, "%s links to %s, which does not exist", file, target) {
					continue
				}
			}
			if anchor == "" {
				continue
			}
			text, err := os.ReadFile(filepath.Join("..", page))
			require.NoError(t, err)
			assert.True(t, anchors(string(text))[anchor], "%s links to %s: %s has no heading with that anchor", file, target, page)
		}
	}
}

// repoFiles lists the repository's files (relative, slash-separated),
// without .git and .tools.
func repoFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir("..", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == ".tools") {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			out = append(out, filepath.ToSlash(strings.TrimPrefix(p, ".."+string(filepath.Separator))))
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// docs/testing.md names test files and tests; each exists. A Go file named
// with a directory is that path (a * in it a glob), a bare one a file of
// that name somewhere in the tree; a Test, Benchmark or Fuzz name (a
// trailing * a prefix) is a function of a _test.go file.
func TestTestingDocNamesExist(t *testing.T) {
	raw, err := os.ReadFile("../docs/testing.md")
	require.NoError(t, err)
	files := repoFiles(t)
	var testSrc strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			b, err := os.ReadFile(filepath.Join("..", f))
			require.NoError(t, err)
			testSrc.Write(b)
		}
	}
	funcs := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^func (?:\([^)]*\) )?((?:Test|Benchmark|Fuzz)\w*)\(`).FindAllStringSubmatch(testSrc.String(), -1) {
		funcs[m[1]] = true
	}
	spans := regexp.MustCompile("`([^`\n]+)`").FindAllStringSubmatch(string(raw), -1)
	require.NotEmpty(t, spans)
	for _, s := range spans {
		words := strings.Fields(s[1])
		for i, word := range words {
			word = strings.Trim(word, ",;:()'")
			// the pattern of -run or -bench names the start of a name
			pattern := i > 0 && slices.Contains([]string{"-run", "-bench", "-fuzz"}, words[i-1])
			switch {
			case strings.HasSuffix(word, ".go") && !strings.HasPrefix(word, "-"):
				var ok bool
				for _, f := range files {
					if !strings.Contains(word, "/") {
						f = filepath.Base(f)
					}
					if m, _ := filepath.Match(word, f); m {
						ok = true
						break
					}
				}
				assert.True(t, ok, "docs/testing.md names %s, which does not exist", word)
			case regexp.MustCompile(`^(Test|Benchmark|Fuzz)[A-Z0-9]\w*\*?$`).MatchString(word):
				name, prefix := strings.CutSuffix(word, "*")
				ok := funcs[name]
				if prefix || pattern {
					for f := range funcs {
						ok = ok || strings.HasPrefix(f, name)
					}
				}
				assert.True(t, ok, "docs/testing.md names %s, which no test file defines", word)
			}
		}
	}
}
