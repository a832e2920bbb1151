package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"helm.sh/helm/v3/pkg/chart"
)

// validateValues checks coalesced values against the chart's
// values.schema.json and its subcharts', as helm install and template do.
// Helm's own validator resolves $ref over HTTP and from any local file; this
// one resolves nothing outside the schema document, so a chart cannot make
// a worker fetch a URL or read its files.
func validateValues(c *chart.Chart, vals map[string]any) error {
	var sb strings.Builder
	validateChartValues(c, vals, &sb)
	if sb.Len() > 0 {
		return fmt.Errorf("values don't meet the specifications of the schema(s) in the following chart(s):\n%s", sb.String())
	}
	return nil
}

func validateChartValues(c *chart.Chart, vals map[string]any, sb *strings.Builder) {
	if len(c.Schema) > 0 {
		if err := validateSchema(c.Schema, vals); err != nil {
			fmt.Fprintf(sb, "%s:\n%s\n", c.Name(), err)
		}
	}
	for _, sub := range c.Dependencies() {
		raw, ok := vals[sub.Name()]
		if !ok || raw == nil {
			continue
		}
		subVals, ok := raw.(map[string]any)
		if !ok {
			fmt.Fprintf(sb, "%s:\nvalues must be a map, not %T\n", sub.Name(), raw)
			continue
		}
		validateChartValues(sub, subVals, sb)
	}
}

const schemaURL = "file:///values.schema.json"

func validateSchema(schemaJSON []byte, vals map[string]any) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return fmt.Errorf("values.schema.json: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return fmt.Errorf("values.schema.json: %w", err)
	}
	s, err := c.Compile(schemaURL)
	if err != nil {
		return fmt.Errorf("values.schema.json: %w", err)
	}
	// The validator wants JSON's types: round-trip through the JSON decoder
	// the schema library uses.
	j, err := json.Marshal(vals)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		return err
	}
	if err := s.Validate(inst); err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "jsonschema validation failed with '"+schemaURL+"#'\n"))
	}
	return nil
}

// noLoader refuses every $ref outside the schema document.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("$ref %s: Ferry does not load schemas from outside values.schema.json", url)
}
