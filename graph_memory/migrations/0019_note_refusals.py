# Issue 31: the write-back guard's record of refused notes (graph_memory/models/writeback.py; no note text),
# and the lint's finding of notes filed before it that would cross.

import django.contrib.postgres.fields
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from graph_memory import conf


class Migration(migrations.Migration):

    dependencies = [
        ('graph_memory', '0018_missed_change'),
        migrations.swappable_dependency(conf.firm_model_label()),
        migrations.swappable_dependency(conf.case_model_label()),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name='lintfinding',
            name='kind',
            field=models.CharField(choices=[('contradicted', 'Contradicted by newer records'), ('stale', 'Stale too long'), ('weak', 'Weak summary'), ('map_drift', 'Map drift'), ('party_hygiene', 'Party hygiene'), ('search_gap', 'Search gap'), ('crossing_note', 'Note crossing the wall')], max_length=16),
        ),
        migrations.CreateModel(
            name='NoteRefusal',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('kinds', django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=16), default=list, help_text='The kinds of fact that matched.', size=None)),
                ('source_case_ids', django.contrib.postgres.fields.ArrayField(base_field=models.BigIntegerField(), default=list, help_text="The filer's cases the matched facts belong to.", size=None)),
                ('matches', models.PositiveIntegerField(default=0, help_text='How many facts matched.')),
                ('case', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to=conf.case_model_label())),
                ('filer', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('firm', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=conf.firm_model_label())),
            ],
            options={
                'ordering': ['-created_at', '-id'],
                'indexes': [models.Index(fields=['firm', '-created_at'], name='gm_refusal_firm'), models.Index(fields=['case'], name='gm_refusal_case')],
            },
        ),
    ]
