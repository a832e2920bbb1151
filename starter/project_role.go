package main

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/spf13/cobra"
)

func newProjectRoleCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "role", Short: "The roles of an AppProject: their tokens, for CI"}
	cmd.AddCommand(newProjectRoleTokenCmd())
	return cmd
}

func newProjectRoleTokenCmd() *cobra.Command {
	var expiresIn time.Duration
	var id string
	cmd := &cobra.Command{
		Use:   "create-token PROJECT ROLE",
		Short: "Issue a token of a project role (through ferry-server; ferry login first)",
		Long: `Issue a signed token (a JWT) of a role of spec.roles of an AppProject, as
argocd proj role create-token does: whoever holds it has the role's
policies, on the project's apps alone. Its id (jti) is added to the role's
jwtTokens; deleting it there revokes the token. Tokens are signed by
ferry-server: log in to it first (ferry login), as someone who may update
the project. The token is printed alone, for a script to keep.`,
		Example: `  ferry project role create-token team-a ci --expires-in 720h > ci.token
  curl -H "Authorization: Bearer $(cat ci.token)" -X POST https://ferry.example.com/api/v1/applications/web/sync -d '{}'`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := door()
			if err != nil {
				return err
			}
			if a == nil {
				return errors.New("project role tokens are signed by ferry-server: log in to it first (ferry login SERVER)")
			}
			body := map[string]string{"expiresIn": strconv.FormatInt(int64(expiresIn/time.Second), 10), "id": id}
			var out struct{ Token string }
			path := "/api/v1/projects/" + url.PathEscape(args[0]) + "/roles/" + url.PathEscape(args[1]) + "/token"
			if err := a.do(cmd.Context(), "POST", path, nil, body, &out); err != nil {
				return fmt.Errorf("project %q role %q: create a token: %w", args[0], args[1], err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), out.Token)
			return nil
		},
	}
	cmd.Flags().DurationVar(&expiresIn, "expires-in", 0, "how long the token is valid (0: until revoked)")
	cmd.Flags().StringVar(&id, "id", "", "the token's id (jti); default: a random one")
	return cmd
}
