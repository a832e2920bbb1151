package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// serverContext is a login to a ferry-server, as `ferry login` stores it
// (argocd login keeps its contexts alike).
type serverContext struct {
	Server string `json:"server"`
	Token  string `json:"token"`
	// Insecure skips the check of the server's certificate (--insecure,
	// a self-signed one); Fingerprint pins it instead.
	Insecure    bool   `json:"insecure,omitempty"`
	Fingerprint string `json:"fingerprint,omitempty"`
	Username    string `json:"username,omitempty"`
	// ControlNamespace is the server's (its settings): apps outside it
	// are named namespace/name.
	ControlNamespace string `json:"controlNamespace,omitempty"`
}

// cliConfig is the CLI's config file: the logins and the one in use.
type cliConfig struct {
	Current  string                   `json:"current,omitempty"`
	Contexts map[string]serverContext `json:"contexts,omitempty"`
}

// configPath is FERRY_CONFIG, else ferry/config.json of the user's
// config directory.
func configPath() (string, error) {
	if p := os.Getenv("FERRY_CONFIG"); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no config directory (set FERRY_CONFIG): %w", err)
	}
	return filepath.Join(dir, "ferry", "config.json"), nil
}

func loadConfig() (*cliConfig, string, error) {
	path, err := configPath()
	if err != nil {
		return nil, "", err
	}
	cfg := &cliConfig{Contexts: map[string]serverContext{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return cfg, path, nil
	}
	if err == nil {
		err = json.Unmarshal(b, cfg)
	}
	if err != nil {
		return nil, path, fmt.Errorf("read %s: %w (fix it, or delete it and log in again)", path, err)
	}
	if cfg.Contexts == nil {
		cfg.Contexts = map[string]serverContext{}
	}
	return cfg, path, nil
}

func (c *cliConfig) save(path string) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o600)
}

// loggedIn is the context in use, or nil: the CLI then talks to Temporal
// directly, as operators do.
func loggedIn() (*serverContext, error) {
	cfg, _, err := loadConfig()
	if err != nil || cfg.Current == "" {
		return nil, err
	}
	sc, ok := cfg.Contexts[cfg.Current]
	if !ok {
		return nil, nil
	}
	return &sc, nil
}

func newLoginCmd() *cobra.Command {
	var username string
	var passwordStdin, insecure, sso bool
	cmd := &cobra.Command{
		Use:   "login SERVER",
		Short: "Log in to a ferry-server; ferry app and ferry project then go through it, with your rights",
		Long: `Log in to ferry-server at SERVER (host:port or https://host:port) with a
local account's username and password, or with --sso through the server's
OIDC provider in a browser, and keep the session in the CLI's config (FERRY_CONFIG, or
ferry/config.json of your config directory), as argocd login does. Once
logged in, ferry app and ferry project go through the server with your
rights; ferry logout goes back to Temporal directly (for operators).`,
		Example: `  ferry login 127.0.0.1:8080 --username admin --password-stdin --insecure < password
  ferry login ferry.example.com --sso`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sc := serverContext{Server: serverURL(args[0]), Insecure: insecure}
			var err error
			switch {
			case sso:
				sc.Token, sc.Username, err = ssoLogin(cmd, &sc)
			case username == "":
				return errors.New("give --username, and the password on stdin with --password-stdin; or --sso")
			default:
				var password string
				if password, err = readPassword(cmd.InOrStdin(), passwordStdin); err == nil {
					sc.Token, err = newAPI(&sc).login(cmd.Context(), username, password)
					sc.Username = username
				}
			}
			if err == nil {
				var settings struct{ ControllerNamespace string }
				err = newAPI(&sc).do(cmd.Context(), "GET", "/api/v1/settings", nil, nil, &settings)
				sc.ControlNamespace = settings.ControllerNamespace
			}
			if err != nil {
				return fmt.Errorf("log in to %s: %w", sc.Server, err)
			}
			cfg, path, err := loadConfig()
			if err != nil {
				return err
			}
			cfg.Contexts[sc.Server], cfg.Current = sc, sc.Server
			if err := cfg.save(path); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "logged in to %s as %s (context kept in %s)\n", sc.Server, sc.Username, path)
			return nil
		},
	}
	cmd.Flags().StringVar(&username, "username", "", "a local account's name")
	cmd.Flags().BoolVar(&passwordStdin, "password-stdin", false, "read the password from stdin")
	cmd.Flags().BoolVar(&insecure, "insecure", false, "do not check the server's certificate (a self-signed one)")
	cmd.Flags().BoolVar(&sso, "sso", false, "log in through the server's OIDC provider, in a browser")
	return cmd
}

func newLogoutCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "logout",
		Short: "Forget the login in use: ferry talks to Temporal directly again",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, path, err := loadConfig()
			if err != nil || cfg.Current == "" {
				return err
			}
			delete(cfg.Contexts, cfg.Current)
			server := cfg.Current
			cfg.Current = ""
			if err := cfg.save(path); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "logged out of %s\n", server)
			return nil
		},
	}
}

// serverURL is https://HOST:PORT for what login was given.
func serverURL(s string) string {
	s = strings.TrimSuffix(s, "/")
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	return s
}

// readPassword reads a line from stdin when asked to (--password-stdin).
func readPassword(in io.Reader, fromStdin bool) (string, error) {
	if !fromStdin {
		return "", errors.New("give the password on stdin with --password-stdin")
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}
