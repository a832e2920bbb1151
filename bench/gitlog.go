package bench

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// gitRequests counts the requests the stack's Git server logged per repo:
// ls-remote is GET <repo>.git/info/refs?service=git-upload-pack, a fetch
// POSTs <repo>.git/git-upload-pack after it.
type gitRequests struct {
	LsRemote map[string]int
	Fetch    map[string]int
}

func (e *Env) gitLogPath() string { return filepath.Join(e.Stack.LogDir, "git.log") }

// gitLogOffset is the size of the Git server's log now.
func (e *Env) gitLogOffset() int64 {
	fi, err := os.Stat(e.gitLogPath())
	if err != nil {
		return 0
	}
	return fi.Size()
}

// gitRequestsBetween parses the log between two offsets. Lines look like
// "2026-01-02T03:04:05Z GET /fleet-00.git/info/refs?service=git-upload-pack 200 3ms".
func (e *Env) gitRequestsBetween(from, to int64) (gitRequests, error) {
	return e.parseGitLog(e.gitLogPath(), from, to)
}

func (e *Env) parseGitLog(path string, from, to int64) (gitRequests, error) {
	out := gitRequests{LsRemote: map[string]int{}, Fetch: map[string]int{}}
	f, err := os.Open(path)
	if err != nil {
		return out, err
	}
	defer f.Close()
	sc := bufio.NewScanner(io.NewSectionReader(f, from, to-from))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 3 {
			continue
		}
		method, target := fields[1], fields[2]
		path, query, _ := strings.Cut(target, "?")
		switch {
		case method == "GET" && strings.HasSuffix(path, ".git/info/refs") && strings.Contains(query, "service=git-upload-pack"):
			out.LsRemote[repoOf(path, "/info/refs")]++
		case method == "POST" && strings.HasSuffix(path, ".git/git-upload-pack"):
			out.Fetch[repoOf(path, "/git-upload-pack")]++
		}
	}
	return out, sc.Err()
}

func repoOf(path, suffix string) string {
	return strings.TrimSuffix(strings.TrimPrefix(strings.TrimSuffix(path, suffix), "/"), ".git")
}
