/**
 * What the auto-configuration wires that is not API: the list of features every runtime
 * holds ({@link dev.gatewaylb.internal.autoconfigure.Features}), the environment
 * post-processor, the dashboard's configuration, the host version checks.
 */
@NullMarked
package dev.gatewaylb.internal.autoconfigure;

import org.jspecify.annotations.NullMarked;
