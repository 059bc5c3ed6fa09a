package check

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"slices"
	"strings"
)

// SARIF 2.1.0, the format code-scanning services read: one rule per reason, one result per
// denial (level error), relaxed denial and warning (level warning), located at the file and
// the document in it. A kind judged without its CRD is a notification of the run's
// invocation (toolExecutionNotifications, level warning): SARIF's place for what a tool
// could not analyse, which is about no one document.
type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations,omitempty"`
	Results     []sarifResult     `json:"results"`
}

type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications"`
}

type sarifNotification struct {
	Descriptor sarifDescriptor `json:"descriptor"`
	Level      string          `json:"level"`
	Message    sarifMessage    `json:"message"`
}

type sarifDescriptor struct {
	ID string `json:"id"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri"`
	Version        string      `json:"version,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID               string       `json:"id"`
	ShortDescription sarifMessage `json:"shortDescription"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	Level     string          `json:"level"`
	Message   sarifMessage    `json:"message"`
	Locations []sarifLocation `json:"locations"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical  `json:"physicalLocation"`
	LogicalLocations []sarifLogical `json:"logicalLocations"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifLogical struct {
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

// ruleText says what each reason means, for the SARIF rules.
var ruleText = map[string]string{
	"InvalidTargetRef":        "A malformed or unsupported target reference",
	"RefNotPermitted":         "A reference to another namespace without a ReferenceGrant there",
	"MultipleMergeStrategies": "More than one merge strategy in one policy",
	"Conflicted":              "Another policy at the same level whose outcome against this one would depend on creation order alone",
	"TargetNotFound":          "The target does not exist yet; the policy takes effect once it does",
	"SectionNotFound":         "The target has no such section yet; the policy takes effect once it does",
	"SelectsNothing":          "A label selector of the policy selects no object",
	"SelectionNotPermitted":   "A label selector selects objects in other namespaces that no ReferenceGrant admits",
}

// WriteSARIF writes the report as a SARIF 2.1.0 log; version names the tool's build.
func WriteSARIF(w io.Writer, r *Report, version string) error {
	results := []sarifResult{}
	add := func(res Result, rule, level, text string) {
		results = append(results, sarifResult{
			RuleID: rule, Level: level, Message: sarifMessage{Text: text},
			Locations: []sarifLocation{{
				PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: res.File}},
				LogicalLocations: []sarifLogical{{FullyQualifiedName: fmt.Sprintf("%s %s (document %d)", res.Kind, ref(res), res.Document), Kind: "resource"}},
			}},
		})
	}
	for _, res := range r.Results {
		for _, d := range res.Denials {
			add(res, d.Reason, "error", fmt.Sprintf("%s %s: %s: %s", res.Kind, ref(res), d.Field, d.Message))
		}
		for _, d := range res.Relaxed {
			add(res, d.Reason, "warning", fmt.Sprintf("%s %s: %s: %s (admitted: enforcement mode is %s)", res.Kind, ref(res), d.Field, d.Message, d.Mode))
		}
		for _, warning := range res.Warnings {
			reason, _, _ := strings.Cut(warning, ":")
			add(res, reason, "warning", fmt.Sprintf("%s %s: %s", res.Kind, ref(res), warning))
		}
	}
	return writeSARIFLog(w, version, results, r.NotChecked)
}

// notCheckedID names the notification of a kind judged without its CRD.
const notCheckedID = "NotChecked"

// writeSARIFLog writes results as one run of a SARIF 2.1.0 log (check's and check --diff's),
// with one rule per reason among them, sorted, and the kinds not checked as notifications.
func writeSARIFLog(w io.Writer, version string, results []sarifResult, notChecked []NotChecked) error {
	run := sarifRun{
		Tool:    sarifTool{Driver: sarifDriver{Name: "policy-attachment", InformationURI: "https://github.com/policyattachment/webhook", Version: version, Rules: []sarifRule{}}},
		Results: results,
	}
	if len(notChecked) > 0 {
		inv := sarifInvocation{ExecutionSuccessful: true}
		for _, n := range notChecked {
			inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{
				Descriptor: sarifDescriptor{ID: notCheckedID}, Level: "warning", Message: sarifMessage{Text: n.Kind + ": " + n.Message}})
		}
		run.Invocations = []sarifInvocation{inv}
	}
	var ids []string
	for _, res := range results {
		if !slices.Contains(ids, res.RuleID) {
			ids = append(ids, res.RuleID)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		text := ruleText[id]
		if text == "" {
			text = id
		}
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{ID: id, ShortDescription: sarifMessage{Text: text}})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0", Runs: []sarifRun{run}})
}

// JUnit XML, which every CI system shows: one test case per policy, failed when denied.
type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
	// SystemOut says which kinds were judged without their CRD (after the test cases, as
	// JUnit's schema orders a suite's elements).
	SystemOut string `xml:"system-out,omitempty"`
}

type junitCase struct {
	ClassName string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML, suite names the run ("check" or "audit").
func WriteJUnit(w io.Writer, r *Report, suite string) error {
	s := junitSuite{Name: "policy-attachment " + suite, Tests: len(r.Results)}
	for _, res := range r.Results {
		c := junitCase{ClassName: res.Kind, Name: fmt.Sprintf("%s (%s)", ref(res), res.Source)}
		if len(res.Denials) > 0 {
			s.Failures++
			var lines, reasons []string
			for _, d := range res.Denials {
				lines = append(lines, d.Field+": "+d.Message)
				if !slices.Contains(reasons, d.Reason) {
					reasons = append(reasons, d.Reason)
				}
			}
			c.Failure = &junitFailure{Message: strings.Join(reasons, ", "), Type: reasons[0], Text: strings.Join(lines, "\n")}
		}
		var notes []string
		for _, d := range res.Relaxed {
			notes = append(notes, fmt.Sprintf("%s: %s (admitted: enforcement mode is %s)", d.Field, d.Message, d.Mode))
		}
		notes = append(notes, res.Warnings...)
		c.SystemOut = strings.Join(notes, "\n")
		s.Cases = append(s.Cases, c)
	}
	var notes []string
	for _, n := range r.NotChecked {
		notes = append(notes, "not checked: "+n.Kind+": "+n.Message)
	}
	s.SystemOut = strings.Join(notes, "\n")
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(junitSuites{Suites: []junitSuite{s}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func ref(r Result) string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}
