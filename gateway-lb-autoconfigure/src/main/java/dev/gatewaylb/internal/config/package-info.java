/**
 * What the settings root and the features share to map the bound {@code gateway.lb}
 * properties: the layers a service's keys come from
 * ({@link dev.gatewaylb.internal.config.Layers}) and the attributes of a cookie the
 * gateway sets. Below both, so that a feature maps its own block without importing the
 * settings root that names it.
 */
@NullMarked
package dev.gatewaylb.internal.config;

import org.jspecify.annotations.NullMarked;
