/**
 * The failure converter of an encrypting deployment: a failure's message and stack trace move into its encoded
 * attributes, a payload the codec encrypts like any other, so a failure that quotes customer text (an API error
 * echoing the prompt) is not in clear in the history. Workflow code loads it by path (the worker bundles it into the
 * encrypting bundle, `failureConverterPath`), clients and activities use the same instance; decoding needs nothing
 * of it (every DefaultFailureConverter reads encoded attributes back). Workflow-safe: only @temporalio/common.
 */
import { DefaultFailureConverter } from '@temporalio/common';

/** The converter Temporal's `failureConverterPath` loads by this export's name. */
export const failureConverter = new DefaultFailureConverter({ encodeCommonAttributes: true });
