package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/ferry-gitops/ferry/internal/app"
)

func newEditCmd(tf *temporalFlags, cf *controlFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "edit NAME",
		Short: "Edit an app's spec in $EDITOR",
		Long: `Open the YAML of an app's spec in $EDITOR (vi when unset), as argocd app
edit does, and write the spec once the editor exits. A spec with problems
opens the editor again, the problems on top as comments, as kubectl edit
does; saving it unchanged or empty cancels the edit, and nothing changes.
When the write itself is refused (by the worker or ferry-server), the
edited spec is kept in a file that the error names.`,
		Example: `  EDITOR=nano ferry app edit guestbook`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := validateOptions()
			if err != nil {
				return err
			}
			e := &specEditor{name: args[0], opts: opts, command: cmp.Or(os.Getenv("EDITOR"), "vi"),
				stdin: os.Stdin, stdout: cmd.OutOrStdout(), stderr: cmd.ErrOrStderr()}
			err = updateApp(cmd, tf, cf, args[0], e.edit)
			return e.keep(err)
		},
	}
}

// specEditor edits an app's spec in the user's editor.
type specEditor struct {
	name    string
	opts    app.ValidateOptions
	command string
	stdin   *os.File
	stdout  interface{ Write([]byte) (int, error) }
	stderr  interface{ Write([]byte) (int, error) }
	// edited is the spec as the user left it last.
	edited []byte
}

// errEditCancelled: the user saved nothing new.
var errEditCancelled = errors.New("edit cancelled: the spec was saved unchanged or empty, and nothing changed")

// edit opens the editor on the spec of doc until the user saves one that
// reads (app.Read) or cancels, and returns doc with that spec.
func (e *specEditor) edit(doc []byte) ([]byte, error) {
	var obj map[string]any
	if err := json.Unmarshal(doc, &obj); err != nil {
		return nil, err
	}
	spec, err := yaml.Marshal(obj["spec"])
	if err != nil {
		return nil, err
	}
	problem := ""
	for {
		saved, err := e.open(withComments(spec, problem))
		if err != nil {
			return nil, err
		}
		saved = stripComments(saved)
		if len(bytes.TrimSpace(saved)) == 0 || bytes.Equal(bytes.TrimSpace(saved), bytes.TrimSpace(spec)) {
			return nil, errEditCancelled
		}
		e.edited, spec = saved, saved
		var newSpec any
		if err := yaml.Unmarshal(saved, &newSpec); err != nil {
			problem = err.Error()
			continue
		}
		obj["spec"] = newSpec
		out, err := json.Marshal(obj)
		if err != nil {
			return nil, err
		}
		if _, err := app.Read(out, e.opts); err != nil {
			problem = err.Error()
			continue
		}
		return out, nil
	}
}

// open writes content to a temporary file, runs the editor on it and
// returns what it holds once the editor exits.
func (e *specEditor) open(content []byte) ([]byte, error) {
	f, err := os.CreateTemp("", "ferry-app-edit-*.yaml")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(content); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	argv := append(strings.Fields(e.command), f.Name())
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = e.stdin, e.stdout, e.stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("run the editor (EDITOR=%q): %w", e.command, err)
	}
	return os.ReadFile(f.Name())
}

// keep saves the edited spec when writing it failed, and says where.
func (e *specEditor) keep(err error) error {
	if err == nil || e.edited == nil || errors.Is(err, errEditCancelled) {
		return err
	}
	f, ferr := os.CreateTemp("", "ferry-app-edit-"+strings.ReplaceAll(e.name, "/", "_")+"-*.yaml")
	if ferr != nil {
		return err
	}
	defer f.Close()
	if _, ferr := f.Write(e.edited); ferr != nil {
		return err
	}
	return fmt.Errorf("%w\nyour edited spec is kept in %s", err, f.Name())
}

// withComments puts the problem of the last save on top of the spec, as
// YAML comments.
func withComments(spec []byte, problem string) []byte {
	var b bytes.Buffer
	b.WriteString("# Edit the app's spec; save and quit to apply it, or save it unchanged to cancel.\n")
	if problem != "" {
		b.WriteString("#\n# The last save was not applied:\n")
		for _, line := range strings.Split(problem, "\n") {
			b.WriteString("#   " + line + "\n")
		}
	}
	b.Write(spec)
	return b.Bytes()
}

// stripComments drops the lines that are whole comments.
func stripComments(data []byte) []byte {
	var out [][]byte
	for _, line := range bytes.Split(data, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(line), []byte("#")) {
			out = append(out, line)
		}
	}
	return bytes.Join(out, []byte("\n"))
}
