package devenv

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

const modulePath = "github.com/ferry-gitops/ferry"

// requiredTools are what the tools bin dir must hold.
var requiredTools = []string{
	"temporal", "etcd", "kube-apiserver", "kube-controller-manager",
	"kube-scheduler", "kubectl", "kwok", "kwok-stage", "registry",
}

// resolveToolsBin returns the tools bin dir: the option, else
// $FERRY_TOOLS_BIN, else what hack/tools.sh prints (it builds the tools on
// first use, which takes minutes; its progress goes to log).
func resolveToolsBin(ctx context.Context, opt string, log io.Writer) (string, error) {
	bin := opt
	if bin == "" {
		bin = os.Getenv("FERRY_TOOLS_BIN")
	}
	if bin == "" {
		root, err := repoRoot()
		if err != nil {
			return "", err
		}
		script := filepath.Join(root, "hack", "tools.sh")
		fmt.Fprintf(log, "devenv: tools from %s (its first run builds them, about 10 minutes)\n", script)
		cmd := exec.CommandContext(ctx, "bash", script)
		cmd.Dir = root
		var out bytes.Buffer
		cmd.Stdout = &out
		cmd.Stderr = log
		if err := cmd.Run(); err != nil {
			return "", fmt.Errorf("hack/tools.sh failed (%w): run it by hand to see why, or set FERRY_TOOLS_BIN", err)
		}
		bin = lastLine(out.String())
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		return "", err
	}
	for _, name := range requiredTools {
		if _, err := os.Stat(filepath.Join(abs, name)); err != nil {
			return "", fmt.Errorf("tools bin dir %s lacks %s: run hack/tools.sh (or fix FERRY_TOOLS_BIN)", abs, name)
		}
	}
	return abs, nil
}

// repoRoot finds the checkout holding hack/tools.sh: the directory of this
// module's go.mod above the working directory, else the one this source file
// was compiled from (go test and go run build from the checkout).
func repoRoot() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		starts = append(starts, filepath.Dir(file))
	}
	for _, dir := range starts {
		for d := dir; ; d = filepath.Dir(d) {
			if isModuleRoot(d) {
				return d, nil
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	return "", fmt.Errorf("cannot find the %s checkout (with hack/tools.sh) above %v: set FERRY_TOOLS_BIN to the tools bin dir", modulePath, starts)
}

func isModuleRoot(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 2 && fields[0] == "module" {
			_, err := os.Stat(filepath.Join(dir, "hack", "tools.sh"))
			return fields[1] == modulePath && err == nil
		}
	}
	return false
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
