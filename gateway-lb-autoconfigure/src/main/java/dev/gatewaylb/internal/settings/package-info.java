/**
 * The settings layer: binds {@code gateway.lb} and maps it to immutable runtime settings
 * ({@link dev.gatewaylb.internal.settings.ServiceSettings} is the settings root: one line
 * per feature, each feature mapping its own block), keeps the settings in force, and
 * re-binds them on refresh.
 */
@NullMarked
package dev.gatewaylb.internal.settings;

import org.jspecify.annotations.NullMarked;
