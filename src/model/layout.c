/* layout.c - where things live under $STAGE_PATH: container images, Hugging Face files (plain folders, and the
 * Hub cache layout Megatron-Bridge jobs read through HF_HOME).
 *
 * One naming for ./setup, which stages them (src/setup/stage.c), and for launch and the jobs, which
 * read them (moved from src/setup/stage.c so the job layer need not reach up into setup/).
 */
#include "nemoperf/model/layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *np_stage_join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    while (la > 1 && a[la - 1] == '/')
        la--;
    char *s = malloc(la + lb + 2);
    if (!s)
        return NULL;
    memcpy(s, a, la);
    s[la] = '/';
    memcpy(s + la + 1, b, lb + 1);
    return s;
}

char *np_stage_sqsh_name(const char *image)
{
    if (!image)
        return NULL;
    if (strncmp(image, "docker://", 9) == 0)
        image += 9;
    const char *hash = strchr(image, '#');
    if (hash)
        image = hash + 1;
    if (!*image)
        return NULL;
    size_t n = strlen(image);
    char *s = malloc(n + sizeof ".sqsh");
    if (!s)
        return NULL;
    for (size_t i = 0; i < n; i++)
        s[i] = (image[i] == '/' || image[i] == ':') ? '+' : image[i];
    memcpy(s + n, ".sqsh", sizeof ".sqsh");
    return s;
}

char *np_stage_sqsh_path(const char *stage, const char *image)
{
    char *name = np_stage_sqsh_name(image);
    if (!name || !stage)
        return free(name), NULL;
    char *p = np_stage_join(stage, name);
    free(name);
    return p;
}

char *np_stage_hf_dir(const char *stage, const char *repo)
{
    if (!stage || !repo)
        return NULL;
    char *hf = np_stage_join(stage, NP_STAGE_HF);
    if (!hf)
        return NULL;
    char *p = np_stage_join(hf, repo);
    free(hf);
    return p;
}

char *np_stage_mbridge_hf_home(const char *stage)
{
    return stage ? np_stage_join(stage, NP_STAGE_MBRIDGE_HF) : NULL;
}

/* huggingface_hub file_download.py repo_folder_name: "models--" + repo_id with "/" -> "--" */
char *np_hf_cache_repo_dir(const char *hf_home, const char *repo)
{
    if (!hf_home || !repo || !*repo)
        return NULL;
    size_t n = strlen(repo);
    char *name = malloc(sizeof "hub/models--" + 2 * n);
    if (!name)
        return NULL;
    char *w = name + sprintf(name, "hub/models--");
    for (const char *r = repo; *r; r++) {
        if (*r == '/') {
            *w++ = '-';
            *w++ = '-';
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
    char *p = np_stage_join(hf_home, name);
    free(name);
    return p;
}
