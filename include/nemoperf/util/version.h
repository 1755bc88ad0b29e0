/* version.h - the one version string of the nemoperf tools. */
#ifndef NEMOPERF_VERSION_H
#define NEMOPERF_VERSION_H
#ifndef NP_VERSION
#define NP_VERSION "0.1.0"
#endif
#endif
