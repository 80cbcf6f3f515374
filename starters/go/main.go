// Command follow-up starts and follows agent-followup's workflow from Go, by its type name
// (docs/STARTING-FROM-OTHER-LANGUAGES.md). Each command prints one JSON object:
//
//	go run . start --project acme --job web-107 --prompt "Also update the changelog."
//	go run . progress agent-followup/acme/web-107/<digest>
//	go run . poll-now agent-followup/acme/web-107/<digest>
//	go run . result agent-followup/acme/web-107/<digest>
//	go run . cancel agent-followup/acme/web-107/<digest>
//	go run . schedule --project acme --job web-107 --prompt "Rebase on main." --every 1h
//
// TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE select the server, TEMPORAL_TASK_QUEUE the workers' queue.
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

const workflowType = "followUpWorkflow"

// kinds tells a failure type as the way the follow-up ended; other types are "rejected" when not retryable, else "error".
var kinds = map[string]string{
	"InvalidFollowUpInput":    "invalid-input",
	"FollowUpTimedOut":        "timed-out",
	"FollowUpDeliveryUnknown": "delivery-unknown",
}

// defaultID is the id the TypeScript client gives the same input: a retried start attaches instead of sending twice.
func defaultID(projectID, jobID, prompt string) string {
	tuple, _ := json.Marshal([]string{projectID, jobID, prompt})
	// Go escapes <, > and & in JSON; JavaScript's JSON.stringify does not.
	tuple = []byte(strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(tuple)))
	digest := sha256.Sum256(tuple)
	return fmt.Sprintf("agent-followup/%s/%s/%s", projectID, jobID, hex.EncodeToString(digest[:])[:16])
}

// failureOf is the follow-up's failure type: the innermost ApplicationError's (docs/json/workflow/failure-types.schema.json).
func failureOf(err error) map[string]any {
	var canceled *temporal.CanceledError
	if errors.As(err, &canceled) {
		return map[string]any{"kind": "cancelled", "type": "Cancelled", "message": canceled.Error()}
	}
	var application *temporal.ApplicationError
	for cause := err; cause != nil; cause = errors.Unwrap(cause) {
		if found, ok := cause.(*temporal.ApplicationError); ok {
			application = found
		}
	}
	if application == nil {
		return map[string]any{"kind": "error", "type": nil, "message": err.Error()}
	}
	kind, known := kinds[application.Type()]
	if !known {
		kind = map[bool]string{true: "rejected", false: "error"}[application.NonRetryable()]
	}
	return map[string]any{"kind": kind, "type": application.Type(), "message": application.Message()}
}

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: follow-up start|schedule|progress|poll-now|result|cancel ...")
	}
	command, flags := args[0], flag.NewFlagSet(args[0], flag.ContinueOnError)
	project := flags.String("project", "", "the project id")
	job := flags.String("job", "", "the job id")
	prompt := flags.String("prompt", "", "the instruction for the agent")
	polling := flags.String("polling", "", `polling options as JSON, e.g. {"initialInterval": "10s"}`)
	extra := flags.String("extra", "", "more input fields as JSON (to try the workflow's own check)")
	every := flags.Duration("every", time.Hour, "how often the schedule starts a follow-up")
	if err := flags.Parse(args[1:]); err != nil {
		return err
	}

	c, err := client.Dial(client.Options{HostPort: env("TEMPORAL_ADDRESS", "localhost:7233"), Namespace: env("TEMPORAL_NAMESPACE", "default")})
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, taskQueue := context.Background(), env("TEMPORAL_TASK_QUEUE", "agent-followup")

	// The workflow's one argument (docs/json/workflow/input.schema.json); the workflow checks it again.
	input := func() (map[string]any, error) {
		value := map[string]any{"projectId": *project, "jobId": *job, "prompt": *prompt}
		if *polling != "" {
			var options map[string]any
			if err := json.Unmarshal([]byte(*polling), &options); err != nil {
				return nil, err
			}
			value["polling"] = options
		}
		if *extra != "" {
			if err := json.Unmarshal([]byte(*extra), &value); err != nil {
				return nil, err
			}
		}
		return value, nil
	}

	switch command {
	case "start":
		value, err := input()
		if err != nil {
			return err
		}
		started, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID:        defaultID(*project, *job, *prompt),
			TaskQueue: taskQueue,
			// As the TypeScript client does: a start repeated while the follow-up runs attaches to it, and one that
			// completed is not sent again (one that failed, timed out or was cancelled may be).
			WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
			WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY,
			// Without it, the SDK answers a refused start with the completed run as if it had started it.
			WorkflowExecutionErrorWhenAlreadyStarted: true,
		}, workflowType, value)
		var completed *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &completed) {
			return print(map[string]any{"workflowId": defaultID(*project, *job, *prompt), "runId": nil, "alreadyCompleted": true})
		}
		if err != nil {
			return err
		}
		return print(map[string]any{"workflowId": started.GetID(), "runId": started.GetRunID(), "alreadyCompleted": false})
	case "schedule":
		value, err := input()
		if err != nil {
			return err
		}
		id := fmt.Sprintf("agent-followup-schedule/%s/%s/go", *project, *job)
		_, err = c.ScheduleClient().Create(ctx, client.ScheduleOptions{
			ID:   id,
			Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: *every}}},
			Action: &client.ScheduleWorkflowAction{
				ID:        fmt.Sprintf("agent-followup/%s/%s/scheduled", *project, *job),
				Workflow:  workflowType,
				Args:      []any{value},
				TaskQueue: taskQueue,
			},
		})
		if err != nil {
			return err
		}
		return print(map[string]any{"scheduleId": id})
	}

	if flags.NArg() != 1 {
		return fmt.Errorf("usage: follow-up %s <workflow id>", command)
	}
	workflowID := flags.Arg(0)
	switch command {
	case "progress":
		answer, err := c.QueryWorkflow(ctx, workflowID, "", "progress")
		if err != nil {
			return err
		}
		var progress map[string]any
		if err := answer.Get(&progress); err != nil {
			return err
		}
		return print(progress)
	case "poll-now":
		var asked struct {
			ReadAtMs int64 `json:"readAtMs"`
		}
		handle, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
			WorkflowID:   workflowID,
			UpdateName:   "pollNow",
			WaitForStage: client.WorkflowUpdateStageCompleted,
		})
		if err == nil {
			err = handle.Get(ctx, &asked)
		}
		// Refused, writing nothing, when a read asked for before is still due: that read covers this ask.
		var refusal *temporal.ApplicationError
		if errors.As(err, &refusal) && refusal.Type() == "PollNowCovered" {
			if err := refusal.Details(&asked); err != nil {
				return err
			}
			return print(map[string]any{"requested": true, "readAtMs": asked.ReadAtMs, "covered": true})
		}
		if err != nil {
			return err
		}
		return print(map[string]any{"requested": true, "readAtMs": asked.ReadAtMs, "covered": false})
	case "result":
		var result map[string]any
		if err := c.GetWorkflow(ctx, workflowID, "").Get(ctx, &result); err != nil {
			var failed *temporal.WorkflowExecutionError
			if !errors.As(err, &failed) {
				return err
			}
			return print(failureOf(err))
		}
		return print(map[string]any{"kind": result["outcome"], "prLink": result["prLink"], "result": result})
	case "cancel":
		if err := c.CancelWorkflow(ctx, workflowID, ""); err != nil {
			return err
		}
		return print(map[string]any{"requested": true})
	}
	return fmt.Errorf("unknown command %q", command)
}

func env(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}

func print(value any) error {
	return json.NewEncoder(os.Stdout).Encode(value)
}
