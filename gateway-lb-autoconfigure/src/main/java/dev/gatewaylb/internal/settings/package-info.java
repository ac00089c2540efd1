/**
 * The settings layer: binds {@code gateway.lb} and maps it to immutable runtime settings,
 * keeps the settings in force, and re-binds them on refresh. The only layer that reads
 * the {@code config} binding records.
 */
@NullMarked
package dev.gatewaylb.internal.settings;

import org.jspecify.annotations.NullMarked;
